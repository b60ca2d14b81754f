"""`train_rlvr`: TRL GRPOTrainer on generation-pool prompts with the checker as the reward."""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Callable
from contextlib import ExitStack
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from rsi_hub.chat import write_serving_files
from rsi_hub.errors import OutputDirNotEmptyError, RsiHubError
from rsi_hub.synth.filter import Judge, checker_version, validate_prompts
from rsi_hub.synth.pool import Eligible, select_prompts
from rsi_hub.synth.prompts import PoolPrompt, served_messages
from rsi_hub.synth.provenance import (
    file_sha256,
    framework_versions,
    prompt_ids_sha256,
    weights_sha256,
)
from rsi_hub.synth.rlvr.config import RlvrConfig
from rsi_hub.synth.rlvr.reward import CheckerReward

TRAINING_EVIDENCE_FILE = "training_evidence.json"
PROMPTS_FILE = "rlvr_prompts.jsonl"
TINY = "tiny"
# The metrics of TRL's log that make up the reward curve in the evidence.
REWARD_KEYS = ("reward", "reward_std", "rewards/checker/mean", "rewards/checker/std", "loss")


def rlvr_rows(prompts: list[PoolPrompt]) -> list[dict[str, Any]]:
    """GRPO dataset rows: the served prompt (k0 + user), the checks as JSON, the pool id.

    Rollouts are drawn exactly as the model is served, so the policy improves the served
    behaviour; the tokenizer's chat template (the served one) renders the prompt.
    """
    return [
        {
            "prompt": served_messages(p),
            "checks_json": json.dumps(list(p.checks), sort_keys=True),
            "prompt_id": str(p.id),
        }
        for p in prompts
    ]


def grpo_args(config: RlvrConfig, output_dir: Path) -> Any:
    """TRL `GRPOConfig` of a recipe (CPU-only machines train in FP32 on the CPU)."""
    import torch
    from trl import GRPOConfig

    on_cpu = not torch.cuda.is_available()
    return GRPOConfig(
        output_dir=str(output_dir),
        num_generations=config.num_generations,
        max_completion_length=config.max_completion_length,
        temperature=config.temperature,
        top_p=config.top_p,
        beta=config.beta,
        loss_type=config.loss_type,
        mask_truncated_completions=config.mask_truncated_completions,
        learning_rate=config.learning_rate,
        lr_scheduler_type=config.lr_scheduler_type,
        warmup_steps=config.warmup_steps,
        weight_decay=config.weight_decay,
        max_grad_norm=config.max_grad_norm,
        per_device_train_batch_size=config.per_device_train_batch_size,
        gradient_accumulation_steps=config.gradient_accumulation_steps,
        max_steps=config.max_steps,
        activation_checkpointing=config.activation_checkpointing,
        bf16=config.bf16 and not on_cpu,
        use_cpu=on_cpu,
        use_vllm=config.use_vllm,
        vllm_mode=config.vllm_mode,
        vllm_gpu_memory_utilization=config.vllm_gpu_memory_utilization,
        vllm_tensor_parallel_size=config.vllm_tensor_parallel_size,
        logging_steps=config.logging_steps,
        save_strategy="steps" if config.save_steps > 0 else "no",
        save_steps=config.save_steps if config.save_steps > 0 else 500,
        seed=config.seed,
        report_to=[],
        # The served template already defaults thinking off; say so explicitly for rollouts.
        chat_template_kwargs={"enable_thinking": False},
    )


def _check_output_dir(output_dir: Path, force: bool) -> None:
    if output_dir.exists() and any(output_dir.iterdir()) and not force:
        raise OutputDirNotEmptyError(
            f"{output_dir} already holds files: choose another output_dir=... or pass --force."
        )


def _resolve_model(config: RlvrConfig, stack: ExitStack) -> Path:
    if config.model == TINY:
        from rsi_hub.tiny import build_tiny

        scratch = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="rlvr-tiny-")))
        return build_tiny(scratch / "run", seed=0)
    model = Path(config.model)
    if not model.is_dir():
        raise RsiHubError(f"{model}: not a model folder (set model=RUN_DIR or model=tiny).")
    return model


def _load_prompts(config: RlvrConfig, eligible: Eligible | None) -> list[PoolPrompt]:
    prompts_file = None if config.prompts == "pool" else config.prompts
    prompts = select_prompts(prompts_file, config.limit, eligible)
    if not prompts:
        raise RsiHubError("no eligible prompts for RLVR (the pool or prompt file is empty).")
    validate_prompts(prompts)  # a malformed check must not crash the reward mid-training
    return prompts


def _reward_log(log_history: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [
        {"step": e.get("step"), **{k: e[k] for k in REWARD_KEYS if k in e}}
        for e in log_history
        if any(k in e for k in REWARD_KEYS[:3])
    ]


def train_rlvr(
    config: RlvrConfig,
    *,
    force: bool = False,
    eligible: Eligible | None = None,
    judge: Judge | None = None,
    on_trainer: Callable[[Any], None] | None = None,
) -> Path:
    """Run an RLVR (GRPO) arm and leave a run directory in `config.output_dir`.

    Args:
        config: the recipe with its overrides applied.
        force: write into a non-empty output folder.
        eligible, judge: the suites' eligibility rule and the checker by default (tests inject).
        on_trainer: called with the built `GRPOTrainer` before training (tests, callbacks).

    Returns:
        The run directory: weights, tokenizer, serving files, `rlvr_prompts.jsonl` and
        `training_evidence.json` (with the reward curve).
    """
    from datasets import Dataset
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from trl import GRPOTrainer

    output_dir = Path(config.output_dir)
    _check_output_dir(output_dir, force)
    prompts = _load_prompts(config, eligible)
    output_dir.mkdir(parents=True, exist_ok=True)
    prompts_path = output_dir / PROMPTS_FILE
    rows = rlvr_rows(prompts)
    prompts_path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows))
    start_time = _now()
    with ExitStack() as stack:
        model_dir = _resolve_model(config, stack)
        base_sha = weights_sha256(model_dir)
        tokenizer = AutoTokenizer.from_pretrained(model_dir)
        model = AutoModelForCausalLM.from_pretrained(model_dir, dtype="auto")
        reward = CheckerReward(config.reward_pass_weight, config.reward_fraction_weight, judge)
        trainer = GRPOTrainer(
            model=model,
            reward_funcs=[reward],
            args=grpo_args(config, output_dir),
            train_dataset=Dataset.from_list(rows),
            processing_class=tokenizer,
        )
        if on_trainer is not None:
            on_trainer(trainer)
        trainer.train()
        trainer.save_model(str(output_dir))
        tokenizer.save_pretrained(output_dir)
        write_serving_files(output_dir)
        evidence = rlvr_evidence(
            config,
            model_dir=model_dir,
            base_sha=base_sha,
            output_dir=output_dir,
            prompts=prompts,
            prompts_path=prompts_path,
            start_time=start_time,
            log_history=trainer.state.log_history,
            optimizer_steps=trainer.state.global_step,
        )
    (output_dir / TRAINING_EVIDENCE_FILE).write_text(json.dumps(evidence, indent=2) + "\n")
    return output_dir


def _trl_version() -> dict[str, str]:
    import trl

    return {"trl": trl.__version__}


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def _base_model(config: RlvrConfig, model_dir: Path) -> dict[str, Any]:
    # The lineage's original pretrained model, as the init's own evidence records it.
    evidence_path = model_dir / TRAINING_EVIDENCE_FILE
    if evidence_path.is_file():
        recorded = json.loads(evidence_path.read_text(encoding="utf-8")).get("base_model")
        if isinstance(recorded, dict):
            return recorded
    if config.model == TINY:
        return {"id": None, "revision": None, "note": "random-init tiny checkpoint"}
    return {"id": None, "revision": None, "note": "unknown lineage"}


def rlvr_evidence(
    config: RlvrConfig,
    *,
    model_dir: Path,
    base_sha: str,
    output_dir: Path,
    prompts: list[PoolPrompt],
    prompts_path: Path,
    start_time: str,
    log_history: list[dict[str, Any]],
    optimizer_steps: int,
) -> dict[str, Any]:
    """`training_evidence.json` of an RLVR run, with the keys the SFT / SimPO evidence uses."""
    losses = [e["loss"] for e in log_history if "loss" in e]
    job_id = os.environ.get("SLURM_JOB_ID") or None
    return {
        "status": "completed",
        "method": "rlvr",
        "trainer": "trl.GRPOTrainer",
        "recipe": config.recipe,
        "start_time": start_time,
        "end_time": _now(),
        "init": config.model,
        "init_weights_sha256": base_sha,
        "base_model": _base_model(config, model_dir),
        "weights_sha256": weights_sha256(output_dir),
        # The final Slurm state exists only after the job ends (`rsi-hub train finalize RUN`).
        "slurm": {"job_id": job_id, "state": None},
        "optimizer_steps": optimizer_steps,
        "loss": {"first": losses[0] if losses else None, "last": losses[-1] if losses else None},
        "data": {
            "prompts": config.prompts,
            "n_prompts": len(prompts),
            "prompt_ids_sha256": prompt_ids_sha256([p.id for p in prompts]),
            "dataset_file": PROMPTS_FILE,
            "dataset_sha256": file_sha256(prompts_path),
        },
        "reward": {
            "function": "rsi_hub.checker.check",
            "checker_version": checker_version(),
            "pass_weight": config.reward_pass_weight,
            "fraction_weight": config.reward_fraction_weight,
        },
        "hyperparameters": config.to_dict(),
        "rewards": _reward_log(log_history),
        "seed": config.seed,
        "libraries": {**framework_versions(), **_trl_version()},
    }
