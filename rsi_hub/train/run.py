"""`rsi-hub train sft|simpo|rlvr`: one recipe -> one run directory, resumable, with its evidence.

Run directory (`runs/<name>/`, see DESIGN.md):

    config.json, model*.safetensors, tokenizer files, generation_config.json,
    chat_template.jinja, system_prompt.txt, serving_config.json     the final model, served
    training_evidence.json                                           card section 7
    data/            the prepared data (reused when its fingerprint matches)
    rlvr_prompts.jsonl   the prompts of an RLVR run (instead of data/)
    checkpoints/     checkpoint-N folders (weights, optimizer, scheduler, RNG, data position)
    base/            the tiny checkpoint, when the recipe starts from `model: tiny`

Relaunching the same command continues from the last checkpoint; a completed run is left as it
is. The data is prepared on the main process first; other ranks then find it ready.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rsi_hub.chat import (
    IM_END_TOKEN,
    PAD_TOKEN,
    SPECIAL_TOKEN_IDS,
    write_serving_files,
)
from rsi_hub.data import (
    STATS_FILE,
    PrepConfig,
    load_prepared,
    prep_fingerprint,
    prepare,
    read_stats,
)
from rsi_hub.data.holdout import PromptMatcher
from rsi_hub.distributed import launcher_record, use_cpu_processes_without_gpu
from rsi_hub.errors import RecipeError
from rsi_hub.rundir import TrainingEvidence, library_versions
from rsi_hub.train.evidence import base_model_lineage, now, slurm_job_id, slurm_job_state
from rsi_hub.train.launch import require_packing_support
from rsi_hub.train.packing import pack_for_training
from rsi_hub.train.precision import DTYPE_BY_NAME, cast_saved_weights, keep_fp32_patterns
from rsi_hub.train.recipes import (
    RANDOM_INIT_MODELS,
    RlvrRecipe,
    SFTRecipe,
    SimPORecipe,
    TrainRecipe,
)

CHECKPOINTS_DIR = "checkpoints"
DATA_DIR = "data"
TINY_BASE_DIR = "base"


@dataclass
class TrainResult:
    """What a training call did.

    Attributes:
        run_dir: the run directory.
        evidence: the final `training_evidence.json` record.
        log_history: the trainer's log lines (loss, learning rate, SimPO rewards, ...).
        resumed_from: the checkpoint this launch continued from, if any.
        skipped: true when the run was already complete and nothing was trained.
    """

    run_dir: Path
    evidence: TrainingEvidence
    log_history: list[dict[str, Any]] = field(default_factory=list)
    resumed_from: str | None = None
    skipped: bool = False

    def losses(self) -> list[float]:
        """The training loss of every logged step, in order."""
        return [float(e["loss"]) for e in self.log_history if "loss" in e]


def trl_arguments(recipe: TrainRecipe) -> dict[str, Any]:
    """The keyword arguments of `SFTConfig` / `CPOConfig` / `GRPOConfig` (transformers 5 names).

    For a packed recipe TRL sees `packing=False, padding_free=True`: the rows reach it already
    packed by `rsi_hub.train.packing.pack_for_training`.
    """
    args: dict[str, Any] = {
        "output_dir": str(recipe.run_dir / CHECKPOINTS_DIR),
        "max_steps": recipe.max_steps,
        "learning_rate": recipe.learning_rate,
        "lr_scheduler_type": recipe.lr_scheduler_type,
        "lr_scheduler_kwargs": (
            {"min_lr_rate": recipe.min_lr_rate}
            if recipe.lr_scheduler_type == "cosine_with_min_lr"
            else {}
        ),
        "warmup_steps": recipe.warmup_steps,
        "weight_decay": recipe.weight_decay,
        "max_grad_norm": recipe.max_grad_norm,
        "adam_beta1": recipe.adam_beta1,
        "adam_beta2": recipe.adam_beta2,
        "adam_epsilon": recipe.adam_epsilon,
        "seed": recipe.seed,
        "data_seed": recipe.seed,
        "bf16": recipe.bf16,
        "per_device_train_batch_size": recipe.per_device_train_batch_size,
        "gradient_accumulation_steps": recipe.gradient_accumulation_steps,
        "activation_checkpointing": recipe.activation_checkpointing,
        "max_length": recipe.max_length,
        "logging_steps": recipe.logging_steps,
        "logging_first_step": True,
        "save_strategy": "steps",
        "save_steps": recipe.save_steps,
        "save_total_limit": recipe.save_total_limit,
        "save_only_model": False,  # resuming needs the optimizer, scheduler and RNG states
        "include_num_input_tokens_seen": "non_padding",
        "report_to": "none",
    }
    if isinstance(recipe, SFTRecipe) and recipe.packing:
        # rsi-hub packs the rows itself (`packing.pack_for_training`: TRL's packer over large
        # shards, >= 98 % real tokens); TRL then trains padding-free on the packed rows, whose
        # `seq_lengths` give the document boundaries, and must not cut or re-pack them.
        args.update(packing=False, padding_free=True, max_length=None, shuffle_dataset=False)
    elif isinstance(recipe, SFTRecipe):
        args.update(packing=False, shuffle_dataset=recipe.shuffle_dataset)
        if recipe.length_grouping > 1:
            args["train_sampling_strategy"] = "group_by_length"  # with RsiSFTTrainer's pools
    elif isinstance(recipe, SimPORecipe):
        args.update(
            loss_type="simpo",
            cpo_alpha=recipe.cpo_alpha,
            simpo_gamma=recipe.simpo_gamma,
            beta=recipe.beta,
            disable_dropout=True,
        )
    elif isinstance(recipe, RlvrRecipe):
        from rsi_hub.train.rlvr import grpo_arguments

        # GRPO has no max_length (prompt + completion lengths) and feeds no `input_ids` batch.
        del args["max_length"], args["include_num_input_tokens_seen"]
        args.update(grpo_arguments(recipe))
    return args


def trl_config(recipe: TrainRecipe, **extra: Any) -> Any:
    """The TRL config object of a recipe (TRL and transformers validate every argument).

    Raises:
        RecipeError: TRL or transformers reject a value.
    """
    if isinstance(recipe, SimPORecipe):
        os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")  # CPO is in trl.experimental (1.16)
        from trl.experimental.cpo import CPOConfig as config_cls
    elif isinstance(recipe, RlvrRecipe):
        from trl import GRPOConfig as config_cls
    else:
        from trl import SFTConfig as config_cls
    import torch

    # Pinned host memory only speeds copies to a GPU; without one, torch warns at every epoch.
    extra.setdefault("dataloader_pin_memory", torch.cuda.is_available())
    try:
        return config_cls(**{**trl_arguments(recipe), **extra})
    except ValueError as err:
        raise RecipeError(
            f"recipe {recipe.name}: {config_cls.__name__} rejects the arguments: {err}"
        ) from err


def resolve_model(recipe: TrainRecipe) -> str:
    """The folder or Hub id to load; builds the random-init checkpoint of `model: tiny|nano`."""
    if recipe.model not in RANDOM_INIT_MODELS:
        return recipe.model
    from rsi_hub.tiny import build_tiny

    base = recipe.run_dir / TINY_BASE_DIR
    if not (base / "config.json").is_file():
        build_tiny(base, seed=recipe.seed, force=True, size=recipe.model)
    return str(base)


def load_tokenizer(model: str, revision: str | None = None) -> Any:
    """The model's tokenizer, checked against the serving contract's special ids.

    Its `eos_token` is set to `<|im_end|>` (the end of an assistant turn) and a missing pad
    token to `<unk>`, as served.

    Raises:
        RecipeError: the tokenizer's special-token ids differ from the base model's.
    """
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(model, revision=revision)
    for token, expected in SPECIAL_TOKEN_IDS.items():
        found = tokenizer.convert_tokens_to_ids(token)
        if found != expected:
            raise RecipeError(
                f"tokenizer of {model}: {token} has id {found}, the serving contract needs {expected}; "
                "train from the base model's lineage (or the tiny checkpoint)"
            )
    tokenizer.eos_token = IM_END_TOKEN
    if tokenizer.pad_token is None:
        tokenizer.pad_token = PAD_TOKEN
    return tokenizer


def ensure_data(
    recipe: TrainRecipe, tokenizer: Any, holdout_matcher: PromptMatcher | None = None
) -> tuple[Path, dict[str, Any]]:
    """The prepared data folder of a run and its stats; prepares `recipe.mix` when needed.

    A folder in `<run_dir>/data` is reused only when its recorded fingerprint (mix, sources,
    seed, system policy, max length, tokenizer, guard) equals the recipe's.

    Raises:
        RecipeError: `recipe.dataset` holds the wrong kind of data for the trainer.
    """
    wanted = recipe.data_kind
    if recipe.dataset is not None:
        stats = read_stats(recipe.dataset)
        if stats["kind"] != wanted:
            raise RecipeError(
                f"dataset {recipe.dataset} holds {stats['kind']} rows; the {recipe.trainer} trainer needs {wanted}"
            )
        return Path(recipe.dataset), stats
    data_dir = recipe.run_dir / DATA_DIR
    options = {
        "sources": recipe.sources,
        "seed": recipe.seed,
        "system": recipe.system,
        "max_length": recipe.max_length,
        "holdout_guard": recipe.holdout_guard,
    }
    fingerprint = prep_fingerprint(recipe.mix, tokenizer=tokenizer, **options)
    if (data_dir / STATS_FILE).is_file() and read_stats(data_dir).get("fingerprint") == fingerprint:
        return data_dir, read_stats(data_dir)
    result = prepare(
        PrepConfig(recipe.mix, data_dir, force=True, **options),
        tokenizer=tokenizer,
        holdout_matcher=holdout_matcher,
    )
    return result.path, result.stats


def _hyperparameters(recipe: TrainRecipe, world_size: int) -> dict[str, Any]:
    out = {
        key: getattr(recipe, key)
        for key in ("max_steps", "learning_rate", "lr_scheduler_type", "min_lr_rate", "warmup_steps",
                    "weight_decay", "max_grad_norm", "adam_beta1", "adam_beta2", "adam_epsilon",
                    "per_device_train_batch_size", "gradient_accumulation_steps", "max_length")
        if not (key == "max_length" and isinstance(recipe, RlvrRecipe))
    }  # fmt: skip
    out["world_size"] = world_size
    out["sequences_per_step"] = (
        recipe.per_device_train_batch_size * recipe.gradient_accumulation_steps * world_size
    )
    if isinstance(recipe, SFTRecipe):
        out.update(
            packing=recipe.packing,
            packing_strategy=recipe.packing_strategy if recipe.packing else None,
        )
        if recipe.packing:
            out["max_tokens_per_step"] = out["sequences_per_step"] * recipe.max_length
    if isinstance(recipe, SimPORecipe):
        out.update(
            loss_type="simpo",
            beta=recipe.beta,
            simpo_gamma=recipe.simpo_gamma,
            cpo_alpha=recipe.cpo_alpha,
        )
    if isinstance(recipe, RlvrRecipe):
        rlvr_keys = ("prompts", "limit", "reward_pass_weight", "reward_fraction_weight",
                     "num_generations", "max_completion_length", "temperature", "top_p", "beta",
                     "loss_type", "mask_truncated_completions", "use_vllm")  # fmt: skip
        out.update({key: getattr(recipe, key) for key in rlvr_keys})
    return out


def _new_evidence(
    recipe: TrainRecipe,
    model_path: str,
    data_dir: Path,
    stats: dict[str, Any],
    world_size: int,
    keep_fp32: list[str],
) -> TrainingEvidence:
    import torch

    cuda = torch.cuda.is_available()
    job = slurm_job_id()
    extra: dict[str, Any] = {
        "trainer": {
            "sft": "trl.SFTTrainer",
            "simpo": "trl.experimental.cpo.CPOTrainer (loss_type=simpo)",
            "rlvr": "trl.GRPOTrainer",
        }[recipe.trainer],
        "init_model": {
            "model": recipe.model,
            "path": model_path,
            "revision": recipe.model_revision,
        },
        "precision": {
            "master_weights": "float32",
            "adam_moments": recipe.optimizer_state_dtype
            + (" (stochastic rounding)" if recipe.optimizer_state_dtype == "bfloat16" else ""),
            "compute": "bfloat16 autocast" if recipe.bf16 else "float32",
            "saved_weights": recipe.save_dtype,
            "kept_float32": keep_fp32,
            "no_weight_decay": ["A_log", "D", "norms", "biases"],
        },
        "world_size": world_size,
        "gpu_count": world_size if cuda else 0,
        "gpu_name": torch.cuda.get_device_name(0) if cuda else None,
    }
    if isinstance(recipe, RlvrRecipe):
        from rsi_hub.train.rlvr import folder_weights_sha256, reward_evidence

        extra["init_weights_sha256"] = folder_weights_sha256(model_path)
        extra["reward"] = reward_evidence(recipe)
    return TrainingEvidence(
        kind="rsi-hub training run",
        run=recipe.name,
        method=recipe.trainer,
        status="running",
        base_model=base_model_lineage(model_path, recipe.base_model, recipe.base_model_revision),
        slurm={"job_id": job, "state": None} if job else None,
        optimizer_steps=0,
        data=_data_evidence(recipe, data_dir, stats),
        hyperparameters=_hyperparameters(recipe, world_size),
        seed=recipe.seed,
        libraries=library_versions(),
        recipe=recipe.to_dict(),
        start_time=now(),
        end_time=None,
        attempts=[],
        extra=extra,
    )


def _data_evidence(recipe: TrainRecipe, data_dir: Path, stats: dict[str, Any]) -> dict[str, Any]:
    if isinstance(recipe, RlvrRecipe):
        return dict(stats)  # `rlvr.prepare_prompts` already gives the evidence's data section
    total = stats["total"]
    return {
        "mix": stats["fingerprint"]["mix"],
        "system": stats["fingerprint"]["system"],
        "dataset_sha256": stats["sha256"],
        "sha256_definition": stats["sha256_definition"],
        "path": str(data_dir),
        "samples": total["samples"],
        "tokens": total["tokens"],
        "supervised_fraction": total["supervised_fraction"],
        "table": stats["table"],
        "holdout": stats["holdout"],
    }


def _finish_run_dir(recipe: TrainRecipe, tokenizer: Any, keep_fp32: list[str]) -> None:
    # The trainer saved FP32 master weights; the run directory serves `save_dtype` weights.
    run_dir = recipe.run_dir
    cast_saved_weights(run_dir, recipe.save_dtype, keep_fp32)
    tokenizer.save_pretrained(run_dir)
    write_serving_files(run_dir)
    (run_dir / "training_args.bin").unlink(missing_ok=True)


def _gather_full_state_dict_for_save(trainer: Any) -> None:
    # Checkpoints are sharded (fast, resumable); Trainer.save_model writes weights under FSDP
    # only with a full state dict, so switch for the final save (accelerate's documented use).
    if getattr(trainer, "is_fsdp_enabled", False):
        plugin = trainer.accelerator.state.fsdp_plugin
        if "FULL_STATE_DICT" not in str(plugin.state_dict_type):
            plugin.set_state_dict_type("FULL_STATE_DICT")


@dataclass
class PreparedRun:
    """A trainer ready to run, and what it was built from (see `build_trainer`).

    Attributes:
        recipe: the recipe.
        trainer: the `RsiSFTTrainer` / `RsiSimPOTrainer` / `RsiGRPOTrainer`.
        tokenizer: the model's tokenizer (eos `<|im_end|>`).
        model_path: the folder or Hub id the weights came from.
        data_dir: the prepared data folder; `stats` its stats (RLVR: the prompts file and the
            evidence's data section).
        resume_from: the checkpoint a `train()` call would continue from, if any.
        keep_fp32: name patterns of tensors kept FP32 in the saved weights.
    """

    recipe: TrainRecipe
    trainer: Any
    tokenizer: Any
    model_path: str
    data_dir: Path
    stats: dict[str, Any]
    resume_from: str | None
    keep_fp32: list[str]
    sharding: Any = None  # the trainer's `train.fsdp.FullyShardedCheck`


def _launch_evidence(run: PreparedRun) -> dict[str, Any]:
    """How this launch distributes training: launcher, its config file's sha256, sharding."""
    import torch.distributed as dist

    accelerator = run.trainer.accelerator
    return {
        **launcher_record().to_json(),
        "distributed_type": str(accelerator.distributed_type).rsplit(".", 1)[-1],
        "backend": dist.get_backend() if dist.is_initialized() else None,
        "num_processes": accelerator.num_processes,
        "sharding": run.sharding.facts if run.sharding is not None else None,
    }


def build_trainer(
    recipe: TrainRecipe,
    *,
    callbacks: list[Any] | None = None,
    holdout_matcher: PromptMatcher | None = None,
) -> PreparedRun:
    """Prepare the data, load the model in FP32 and build the TRL trainer of a recipe.

    Nothing is trained; `train` calls this, and tests use it to inspect `trainer.train_dataset`.

    Raises:
        MissingGpuExtraError: a packed recipe without the `gpu` extra.
    """
    recipe.validate()
    require_packing_support(recipe)
    import torch
    from accelerate import PartialState
    from transformers import AutoModelForCausalLM
    from transformers.trainer_utils import get_last_checkpoint

    from rsi_hub.train.fsdp import FullyShardedCheck
    from rsi_hub.train.trainers import RsiGRPOTrainer, RsiSFTTrainer, RsiSimPOTrainer

    # Before the first PartialState: CPU processes need a gloo group (see rsi_hub.distributed).
    state = PartialState(cpu=use_cpu_processes_without_gpu())
    with state.main_process_first():
        model_path = resolve_model(recipe)
        tokenizer = load_tokenizer(model_path, recipe.model_revision)
        if isinstance(recipe, RlvrRecipe):
            from datasets import Dataset

            from rsi_hub.train.rlvr import prepare_prompts

            data_dir, rows, stats = prepare_prompts(recipe)
            dataset = Dataset.from_list(rows)
        else:
            data_dir, stats = ensure_data(recipe, tokenizer, holdout_matcher)
            sft = recipe.trainer == "sft"
            columns = ["input_ids", "assistant_masks"] if sft else ["prompt", "chosen", "rejected"]
            dataset = load_prepared(data_dir).select_columns(columns)
        if isinstance(recipe, SFTRecipe) and recipe.packing:
            # Packed once on the main process; the other ranks reuse the cached result.
            seed = recipe.seed if recipe.shuffle_dataset else None
            dataset = pack_for_training(
                dataset, recipe.max_length, strategy=recipe.packing_strategy, seed=seed
            )

    # FP32 master weights; compute dtype comes from autocast / FSDP mixed precision.
    model = AutoModelForCausalLM.from_pretrained(
        model_path,
        revision=recipe.model_revision,
        dtype=torch.float32,
        attn_implementation=recipe.attn_implementation,
    )
    extra: dict[str, Any] = {}
    if isinstance(recipe, RlvrRecipe):
        from rsi_hub.train.rlvr import checker_reward

        trainer_cls: Any = RsiGRPOTrainer
        extra["reward_funcs"] = [checker_reward(recipe)]
    else:  # (RLVR keeps the KV cache: its rollouts generate)
        model.config.use_cache = False
        trainer_cls = RsiSFTTrainer if recipe.trainer == "sft" else RsiSimPOTrainer
    sharding = FullyShardedCheck()
    if isinstance(recipe, SFTRecipe):
        extra["length_grouping"] = recipe.length_grouping
    trainer = trainer_cls(
        model=model,
        args=trl_config(recipe),
        train_dataset=dataset,
        processing_class=tokenizer,
        callbacks=[*(callbacks or []), sharding],
        optimizer_state_dtype=DTYPE_BY_NAME[recipe.optimizer_state_dtype],
        **extra,
    )
    checkpoints = recipe.run_dir / CHECKPOINTS_DIR
    last = get_last_checkpoint(str(checkpoints)) if checkpoints.is_dir() else None
    return PreparedRun(
        recipe,
        trainer,
        tokenizer,
        model_path,
        data_dir,
        stats,
        last,
        keep_fp32_patterns(model),
        sharding,
    )


def train(
    recipe: TrainRecipe,
    *,
    callbacks: list[Any] | None = None,
    holdout_matcher: PromptMatcher | None = None,
) -> TrainResult:
    """Run a recipe to completion: prepare data, train (resuming if possible), save the run.

    Args:
        recipe: a loaded recipe (`load_recipe`); its trainer picks SFT, SimPO or RLVR (GRPO).
        callbacks: extra `transformers.TrainerCallback`s.
        holdout_matcher: the holdout index for prep (default: `rsi_hub.suites.HoldoutIndex`).

    Returns:
        The run directory, its evidence and the log history.

    Raises:
        MissingGpuExtraError: a packed recipe without the `gpu` extra.
        RecipeError, DataSourceError, HoldoutInputError: bad recipe or data.
    """
    from accelerate import PartialState

    # Before the first PartialState: CPU processes need a gloo group (see rsi_hub.distributed).
    state = PartialState(cpu=use_cpu_processes_without_gpu())
    run_dir = recipe.run_dir
    previous = TrainingEvidence.read_if_any(run_dir)
    if previous is not None and previous.completed:
        if state.is_main_process:
            print(f"{run_dir}: already completed ({previous.optimizer_steps} steps); nothing to do")
        return TrainResult(run_dir, previous, skipped=True)

    if previous is not None and previous.recipe != recipe.to_dict():
        before = previous.recipe or {}
        changed = sorted(
            key
            for key in set(before) | set(recipe.to_dict())
            if before.get(key) != recipe.to_dict().get(key)
        )
        raise RecipeError(
            f"{run_dir} holds an unfinished run of a different recipe (changed: {', '.join(changed)}); "
            "relaunch with the same recipe and overrides to resume, or set output_dir=... for a new run"
        )
    run = build_trainer(recipe, callbacks=callbacks, holdout_matcher=holdout_matcher)
    trainer, last = run.trainer, run.resume_from
    resumed = Path(last).name if last else None
    evidence = previous or _new_evidence(
        recipe, run.model_path, run.data_dir, run.stats, state.num_processes, run.keep_fp32
    )
    if state.is_main_process:
        launcher = launcher_record()
        evidence.attempts = [*(evidence.attempts or []),
            {"start_time": now(), "end_time": None, "resumed_from": resumed,
             "slurm_job_id": slurm_job_id(), "world_size": state.num_processes,
             "launcher": launcher.launcher, "launch_config_sha256": launcher.config_sha256}
        ]  # fmt: skip
        evidence.write(run_dir)

    trainer.train(resume_from_checkpoint=last)
    launch = _launch_evidence(run)
    _gather_full_state_dict_for_save(trainer)
    trainer.save_model(str(run_dir))  # every rank: FSDP gathers the full state dict

    history = list(trainer.state.log_history)
    if state.is_main_process:
        _finish_run_dir(recipe, run.tokenizer, run.keep_fp32)
        losses = [e["loss"] for e in history if "loss" in e]
        evidence.status = "completed"
        evidence.end_time = now()
        evidence.optimizer_steps = trainer.state.global_step
        evidence.extra["tokens_seen"] = int(trainer.state.num_input_tokens_seen or 0)
        evidence.loss = {
            "first": losses[0] if losses else None,
            "last": losses[-1] if losses else None,
        }
        evidence.attempts[-1]["end_time"] = evidence.end_time
        evidence.extra["launch"] = launch  # the launch that finished the run
        if isinstance(recipe, RlvrRecipe):
            from rsi_hub.train.rlvr import folder_weights_sha256, reward_log

            evidence.weights_sha256 = folder_weights_sha256(run_dir)
            evidence.extra["rewards"] = reward_log(history)
        if evidence.slurm and evidence.slurm_job_id:
            # The job is still running here; `rsi-hub train finalize` records its final state.
            evidence.slurm["state_at_end_of_training"] = slurm_job_state(evidence.slurm_job_id)
        evidence.write(run_dir)
    state.wait_for_everyone()
    return TrainResult(run_dir, evidence, history, resumed)
