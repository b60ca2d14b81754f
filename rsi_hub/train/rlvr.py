"""RLVR (card section 6): the GRPO parts of a `trainer: rlvr` recipe.

`rsi_hub.train.run.train` runs an `RlvrRecipe` like any other recipe (same run directory,
resume, relaunch, precision and evidence); this module adds what differs: the prompts instead
of prepared rows, TRL's `GRPOConfig` arguments, the checker reward and the reward evidence.

The prompts come from the suites' generation pool (eligible ids only) or a prompt file, through
the same selection `rsi-hub synth` uses (`rsi_hub.suites.prompts`); rollouts are drawn as served (k0 + user prompt).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from rsi_hub.chat import served_messages
from rsi_hub.errors import PromptError
from rsi_hub.hashing import sha256_file, weights_sha256
from rsi_hub.suites.prompts import PoolPrompt, prompt_ids_sha256, select_prompts, validate_prompts
from rsi_hub.train.recipes import RlvrRecipe
from rsi_hub.train.reward import CheckerReward

PROMPTS_FILE = "rlvr_prompts.jsonl"
# The metrics of TRL's log that make up the reward curve in the evidence.
REWARD_KEYS = ("reward", "reward_std", "rewards/checker/mean", "rewards/checker/std", "loss")


def rlvr_rows(prompts: list[PoolPrompt]) -> list[dict[str, Any]]:
    """GRPO dataset rows: the served prompt (k0 + user), the checks as JSON, the pool id.

    Rollouts are drawn exactly as the model is served, so the policy improves the served
    behaviour; the tokenizer's chat template (the served one) renders the prompt.
    """
    return [
        {
            "prompt": served_messages(p.prompt),
            "checks_json": json.dumps(list(p.checks), sort_keys=True),
            "prompt_id": str(p.id),
        }
        for p in prompts
    ]


def grpo_arguments(recipe: RlvrRecipe) -> dict[str, Any]:
    """The `GRPOConfig` keyword arguments of an RLVR recipe beyond the shared training ones."""
    return {
        "num_generations": recipe.num_generations,
        "max_completion_length": recipe.max_completion_length,
        "temperature": recipe.temperature,
        "top_p": recipe.top_p,
        "beta": recipe.beta,
        "loss_type": recipe.loss_type,
        "mask_truncated_completions": recipe.mask_truncated_completions,
        "use_vllm": recipe.use_vllm,
        "vllm_mode": recipe.vllm_mode,
        "vllm_gpu_memory_utilization": recipe.vllm_gpu_memory_utilization,
        "vllm_tensor_parallel_size": recipe.vllm_tensor_parallel_size,
        # save_steps 0: only the final model is saved.
        "save_strategy": "steps" if recipe.save_steps > 0 else "no",
        "save_steps": recipe.save_steps if recipe.save_steps > 0 else 500,
        # The served template already defaults thinking off; say so explicitly for rollouts.
        "chat_template_kwargs": {"enable_thinking": False},
    }


def select_rlvr_prompts(recipe: RlvrRecipe) -> list[PoolPrompt]:
    """The recipe's prompts: eligible pool prompts (or a prompt file's), the first `limit`.

    Raises:
        PromptError: no eligible prompt, or a prompt the checker cannot judge.
    """
    prompts_file = None if recipe.prompts == "pool" else recipe.prompts
    prompts = select_prompts(prompts_file, recipe.limit)
    if not prompts:
        raise PromptError("no eligible prompts for RLVR (the pool or prompt file is empty).")
    validate_prompts(prompts)  # a malformed check must not crash the reward mid-training
    return prompts


def prepare_prompts(recipe: RlvrRecipe) -> tuple[Path, list[dict[str, Any]], dict[str, Any]]:
    """Select the prompts and write them to `<run_dir>/rlvr_prompts.jsonl`.

    Returns:
        The file, its rows (the GRPO dataset) and the `data` section of the evidence.
    """
    prompts = select_rlvr_prompts(recipe)
    rows = rlvr_rows(prompts)
    path = recipe.run_dir / PROMPTS_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows))
    data = {
        "prompts": recipe.prompts,
        "n_prompts": len(prompts),
        "prompt_ids_sha256": prompt_ids_sha256([p.id for p in prompts]),
        "dataset_file": PROMPTS_FILE,
        "dataset_sha256": sha256_file(path),
        "path": str(path),
    }
    return path, rows, data


def checker_reward(recipe: RlvrRecipe) -> CheckerReward:
    """The recipe's reward function (`reward_funcs=[...]` of the GRPO trainer)."""
    return CheckerReward(recipe.reward_pass_weight, recipe.reward_fraction_weight)


def reward_evidence(recipe: RlvrRecipe) -> dict[str, Any]:
    """The `reward` section of the evidence: the function, the checker version, the weights."""
    from rsi_hub.checker import CHECKER_VERSION

    return {
        "function": "rsi_hub.checker.check",
        "checker_version": str(CHECKER_VERSION),
        "pass_weight": recipe.reward_pass_weight,
        "fraction_weight": recipe.reward_fraction_weight,
    }


def reward_log(log_history: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The reward curve: one entry per logged step with TRL's reward metrics and the loss."""
    return [
        {"step": e.get("step"), **{k: e[k] for k in REWARD_KEYS if k in e}}
        for e in log_history
        if any(k in e for k in REWARD_KEYS[:3])
    ]


def folder_weights_sha256(model_path: str | Path) -> str | None:
    """The weights sha256 of a local model folder (None for a Hub id)."""
    return weights_sha256(model_path) if Path(model_path).is_dir() else None
