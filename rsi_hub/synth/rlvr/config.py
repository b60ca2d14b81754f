"""RLVR recipes: a YAML file per recipe, loaded into a typed config, with `key=value` overrides.

Recipes ship in `rsi_hub/synth/rlvr/recipes/` (`rlvr`: the 30B model on 4 GPUs; `rlvr-smoke`:
the tiny checkpoint on a CPU). A recipe may also be given as a path to a YAML file.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import yaml

from rsi_hub.errors import RecipeError

RECIPE_PACKAGE = "rsi_hub.synth.rlvr.recipes"


@dataclass
class RlvrConfig:
    """Every setting of an RLVR run. Field names follow TRL's `GRPOConfig` where they map."""

    model: str  # a checkpoint folder, or "tiny" for the embedded default
    output_dir: str
    prompts: str = "pool"  # "pool" (the suites' generation pool) or a JSONL prompt file
    limit: int | None = None  # first N eligible prompts
    reward_pass_weight: float = 1.0  # weight of "every check passed" (0/1)
    reward_fraction_weight: float = 0.5  # weight of the fraction of checks passed
    num_generations: int = 8
    max_completion_length: int = 1024
    temperature: float = 0.8
    top_p: float = 0.95
    beta: float = 0.0
    loss_type: str = "dapo"
    mask_truncated_completions: bool = True
    learning_rate: float = 1e-6
    lr_scheduler_type: str = "constant_with_warmup"
    warmup_steps: int = 10
    weight_decay: float = 0.0
    max_grad_norm: float = 1.0
    per_device_train_batch_size: int = 8
    gradient_accumulation_steps: int = 4
    max_steps: int = 200
    activation_checkpointing: bool = True
    bf16: bool = True
    use_vllm: bool = False
    vllm_mode: str = "colocate"
    vllm_gpu_memory_utilization: float = 0.35
    vllm_tensor_parallel_size: int = 1  # colocated engines shard the policy over this many GPUs
    logging_steps: int = 1
    save_steps: int = 50  # 0: save only the final model
    seed: int = 0
    recipe: str = ""  # the recipe's name, filled in by load_recipe

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready copy (the hyper-parameters of the training evidence)."""
        return dataclasses.asdict(self)


def recipe_names() -> list[str]:
    """The names of the shipped RLVR recipes."""
    folder = resources.files(RECIPE_PACKAGE)
    return sorted(p.name[: -len(".yaml")] for p in folder.iterdir() if p.name.endswith(".yaml"))


def _field_types() -> dict[str, Any]:
    return typing.get_type_hints(RlvrConfig)


def _coerce(key: str, value: Any, annotation: Any) -> Any:
    """Check (and for YAML-typed ints as floats, convert) a value against a field's type."""
    allowed = typing.get_args(annotation) if isinstance(annotation, types.UnionType) else ()
    options = allowed or (annotation,)
    if value is None and type(None) in options:
        return None
    for option in options:
        if option is float and isinstance(value, int | float) and not isinstance(value, bool):
            return float(value)
        if option is float and isinstance(value, str):
            # YAML 1.1 reads "2e-5" (no dot) as a string.
            try:
                return float(value)
            except ValueError:
                pass
        if option is int and isinstance(value, int) and not isinstance(value, bool):
            return value
        if option is bool and isinstance(value, bool):
            return value
        if option is str and isinstance(value, str):
            return value
    raise RecipeError(f"RLVR setting {key}={value!r}: expected {annotation}.")


def _build(raw: dict[str, Any], source: str) -> RlvrConfig:
    types_ = _field_types()
    unknown = sorted(set(raw) - set(types_))
    if unknown:
        raise RecipeError(
            f"{source}: unknown RLVR setting(s) {', '.join(unknown)}; valid: {', '.join(types_)}."
        )
    values = {k: _coerce(k, v, types_[k]) for k, v in raw.items()}
    try:
        return RlvrConfig(**values)
    except TypeError as err:
        raise RecipeError(f"{source}: {err}") from err


def load_recipe(name: str, overrides: list[str] | None = None) -> RlvrConfig:
    """The config of recipe `name` (shipped name or YAML path) with `key=value` overrides applied.

    Override values are parsed as YAML scalars (`lr=1e-6`, `limit=null`, `bf16=false`).
    """
    path = Path(name)
    if path.suffix in (".yaml", ".yml") and path.is_file():
        text, recipe = path.read_text(encoding="utf-8"), path.stem
    elif name in recipe_names():
        text = resources.files(RECIPE_PACKAGE).joinpath(f"{name}.yaml").read_text("utf-8")
        recipe = name
    else:
        raise RecipeError(
            f"unknown RLVR recipe {name!r}: choose one of {', '.join(recipe_names())} or give "
            "a YAML file."
        )
    raw = yaml.safe_load(text) or {}
    raw["recipe"] = recipe
    for item in overrides or []:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise RecipeError(f"override {item!r}: expected key=value.")
        raw[key.strip()] = yaml.safe_load(value)
    return _build(raw, f"recipe {recipe}")
