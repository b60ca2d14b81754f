"""Training recipes: one documented dataclass per trainer, YAML files, `key=value` overrides.

A recipe is a YAML file in `rsi_hub/train/recipes/` named after the card's arm (`b1`,
`LA2b200s`, `simpoN`, `rlvr`) or a test recipe (`smoke`, `smoke_simpo`, `rlvr-smoke`).
`--recipe` takes such a name or the path of any YAML file. Trailing `key=value` arguments
override fields, converted to the field's type (`learning_rate=4e-7`, `packing=false`,
`sources.iflensyn=/data/iflensyn.jsonl`); an unknown key is an error that names the valid keys.
"""

from __future__ import annotations

import dataclasses
import difflib
import types
import typing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Literal

import yaml

from rsi_hub.data.masking import SYSTEM_POLICIES
from rsi_hub.data.mix import mix_kind, parse_mix
from rsi_hub.errors import MixSpecError, RecipeError

RECIPES_DIR = Path(__file__).with_name("recipes")
TrainerName = Literal["sft", "simpo", "rlvr"]
LR_SCHEDULERS = ("cosine_with_min_lr", "cosine", "linear", "constant", "constant_with_warmup")
DTYPES = ("bfloat16", "float32")
# The model value that builds the tiny random-init checkpoint into `<output_dir>/base`.
TINY_MODEL = "tiny"
# Model values that build a random-init checkpoint of that size (`rsi_hub.tiny.SIZES`) there.
RANDOM_INIT_MODELS = (TINY_MODEL, "nano")


@dataclass
class TrainRecipe:
    """Fields shared by every trainer. Card section 2/3 values live in the YAML files.

    Parameters:
        > What to train and on what

        name: the run's name; `output_dir` defaults to `runs/<name>`.
        description: one line saying which card arm this is.
        model: the starting weights: a run directory, a local folder, a Hub id, or `tiny` /
            `nano` (build that random-init checkpoint, seeded by `seed`, into
            `<output_dir>/base`).
        model_revision: Hub revision of `model` (a commit sha for reproducibility).
        base_model: the original pretrained model of the lineage, for the evidence; defaults to
            the `base_model` recorded in `model`'s own training_evidence.json.
        base_model_revision: its revision.
        mix: data mix in the card's syntax (`iflensyn:33000`, `tulu3:all,smoltalk:all`).
        sources: local path overrides, source name -> file or folder (`sources.tulu3=PATH`).
        dataset: an already prepared folder (`rsi-hub prep`) to train on instead of preparing
            `mix` into `<output_dir>/data`.
        system: system-message policy of prep: `keep` (the row's own, else none), `k0` (the served
            prompt on every row) or `none`.
        holdout_guard: drop rows matching a holdout suite prompt (card section 2). Keep it on.
        seed: seeds the data sample, the data order and the trainer.

        > Optimisation (AdamW with FP32 master weights and `optimizer_state_dtype` moments)

        max_steps: optimizer steps.
        learning_rate: peak learning rate.
        lr_scheduler_type: transformers scheduler name; `cosine_with_min_lr` decays to
            `min_lr_rate` x peak.
        min_lr_rate: floor of `cosine_with_min_lr` as a fraction of the peak (card: 8 %).
        warmup_steps: linear warmup steps.
        weight_decay: decoupled weight decay; never applied to `A_log`, `D`, norms or biases.
        max_grad_norm: gradient clipping norm.
        adam_beta1, adam_beta2, adam_epsilon: AdamW moments (not in the card; AdamW defaults).
        optimizer_state_dtype: dtype of the Adam moments (card: BF16 optimizer state).
        bf16: compute in BF16 autocast (the master weights stay FP32).
        save_dtype: dtype of the final weights (the MoE router's FP32 tensors stay FP32).

        > Batch, length, memory

        per_device_train_batch_size: sequences per device per micro-step (packed: bins of
            `max_length` tokens).
        gradient_accumulation_steps: micro-steps per optimizer step.
        max_length: longest sequence in tokens; rows longer are dropped at prep, never cut.
        activation_checkpointing: recompute activations in backward (transformers 5 name). With
            FSDP prefer `fsdp_activation_checkpointing` in the accelerate config.
        attn_implementation: `sdpa`, `eager` or `flash_attention_2` (packed GPU runs).

        > Checkpoints, logs, launch

        output_dir: the run directory (`{name}` is replaced by the recipe name).
        logging_steps: optimizer steps between log lines.
        save_steps: optimizer steps between checkpoints (a relaunch resumes from the last one).
        save_total_limit: checkpoints kept (oldest deleted first).
        num_gpus: GPUs the recipe is meant for (0 = CPU); picks the launch.
        launch_config: accelerate config file used when `num_gpus` > 1 (relative to the checkout).
    """

    trainer: ClassVar[TrainerName]
    # The kind of prepared rows the trainer reads from `mix` / `dataset` (None: it reads none).
    data_kind: ClassVar[str | None] = None
    # Fields that must be > 0.
    positive_fields: ClassVar[tuple[str, ...]] = (
        "max_steps", "per_device_train_batch_size", "gradient_accumulation_steps", "max_length",
        "logging_steps", "save_steps",
    )  # fmt: skip
    name: str = "custom"
    description: str = ""
    model: str = TINY_MODEL
    model_revision: str | None = None
    base_model: str | None = None
    base_model_revision: str | None = None
    mix: str = "demo:all"
    sources: dict[str, str] = field(default_factory=dict)
    dataset: str | None = None
    system: str = "keep"
    holdout_guard: bool = True
    seed: int = 0
    max_steps: int = 10
    learning_rate: float = 1e-5
    lr_scheduler_type: str = "cosine_with_min_lr"
    min_lr_rate: float = 0.08
    warmup_steps: int = 0
    weight_decay: float = 0.1
    max_grad_norm: float = 1.0
    adam_beta1: float = 0.9
    adam_beta2: float = 0.999
    adam_epsilon: float = 1e-8
    optimizer_state_dtype: str = "bfloat16"
    bf16: bool = True
    save_dtype: str = "bfloat16"
    per_device_train_batch_size: int = 1
    gradient_accumulation_steps: int = 1
    max_length: int = 8192
    activation_checkpointing: bool = False
    attn_implementation: str = "sdpa"
    output_dir: str = "runs/{name}"
    logging_steps: int = 10
    save_steps: int = 100
    save_total_limit: int | None = 2
    num_gpus: int = 0
    launch_config: str | None = None

    @property
    def run_dir(self) -> Path:
        """The run directory: final weights at its root, `checkpoints/`, `data/`."""
        return Path(self.output_dir.format(name=self.name))

    @property
    def packed(self) -> bool:
        """Whether training packs several rows into one sequence (SFT only)."""
        return False

    def tokens_per_step(self) -> int:
        """Upper bound of tokens per optimizer step over `max(num_gpus, 1)` processes."""
        return (
            self.per_device_train_batch_size
            * self.max_length
            * self.gradient_accumulation_steps
            * max(self.num_gpus, 1)
        )

    def validate(self) -> None:
        """Check values that types alone do not catch.

        Raises:
            RecipeError: naming the field and the allowed values.
        """
        _choice("system", self.system, SYSTEM_POLICIES)
        _choice("lr_scheduler_type", self.lr_scheduler_type, LR_SCHEDULERS)
        _choice("optimizer_state_dtype", self.optimizer_state_dtype, DTYPES)
        _choice("save_dtype", self.save_dtype, DTYPES)
        _choice(
            "attn_implementation", self.attn_implementation, ("sdpa", "eager", "flash_attention_2")
        )
        for name in self.positive_fields:
            if getattr(self, name) <= 0:
                raise RecipeError(f"{name} must be positive, got {getattr(self, name)}")
        if self.learning_rate <= 0:
            raise RecipeError(f"learning_rate must be positive, got {self.learning_rate}")
        if not 0.0 <= self.min_lr_rate <= 1.0:
            raise RecipeError(f"min_lr_rate must be within [0, 1], got {self.min_lr_rate}")
        if self.num_gpus < 0:
            raise RecipeError(f"num_gpus must be 0 (CPU) or more, got {self.num_gpus}")
        if self.num_gpus > 1 and not self.launch_config:
            raise RecipeError(
                f"num_gpus={self.num_gpus} needs a launch_config (an accelerate config file)"
            )
        wanted = self.data_kind
        if self.dataset is None and wanted is not None:
            try:
                kind = mix_kind(parse_mix(self.mix))
            except MixSpecError as err:
                raise RecipeError(f"mix: {err}") from None
            if kind != wanted:
                raise RecipeError(
                    f"mix {self.mix!r} holds {kind} data but the {self.trainer} trainer needs {wanted} sources"
                )

    def to_dict(self) -> dict[str, Any]:
        """The resolved recipe as plain data (what the evidence and the dry run print)."""
        return {"trainer": self.trainer, **dataclasses.asdict(self)}


@dataclass
class SFTRecipe(TrainRecipe):
    """Supervised fine-tuning on assistant-masked ChatML data with TRL's `SFTTrainer`.

    Parameters:
        packing: pack rows into `max_length`-token sequences (padding-free; needs the `gpu`
            extra: the Mamba kernels keep packed documents apart through `seq_idx`).
        packing_strategy: TRL packing strategy; `bfd` keeps every row whole.
        shuffle_dataset: shuffle rows (with `seed`) before packing, so bins mix sources.
        length_grouping: unpacked only: 1 draws every batch at random; N > 1 draws N batches'
            rows at random, sorts them by length and cuts them into N batches (transformers'
            `get_length_grouped_indices` with `mega_batch_mult=N`), so each batch pads less.
            On the nano teacher data a random batch holds 1.73x its real tokens, N=4 1.24x,
            N=50 (transformers' `group_by_length`) 1.03x; but batches of one length are
            batches of one kind of prompt, and N=50 made the nano model learn far less per step
            (IF-818 after 1,200 steps: 27.9 % vs 47.1 % random).
    """

    trainer: ClassVar[TrainerName] = "sft"
    data_kind: ClassVar[str | None] = "sft"
    packing: bool = False
    packing_strategy: str = "bfd"
    shuffle_dataset: bool = True
    length_grouping: int = 1

    @property
    def packed(self) -> bool:
        return self.packing

    def validate(self) -> None:
        super().validate()
        _choice("packing_strategy", self.packing_strategy, ("bfd", "bfd_split", "wrapped"))
        if self.length_grouping < 1:
            raise RecipeError(
                f"length_grouping must be 1 (random batches) or more, got {self.length_grouping}"
            )
        if self.packing and self.length_grouping > 1:
            raise RecipeError(
                "length_grouping applies to unpacked rows (packed bins are all max_length "
                "tokens long): set packing=false or length_grouping=1"
            )


@dataclass
class SimPORecipe(TrainRecipe):
    """SimPO preference optimisation with TRL's `trl.experimental.cpo.CPOTrainer`.

    SimPO is CPO with `loss_type="simpo"` and no behaviour-cloning term (`cpo_alpha=0`); the
    reward is the length-normalised log-probability, scaled by `beta`, with target margin
    `simpo_gamma`. The card gives neither (400 steps, LR 5e-7 only); the defaults are the SimPO
    paper's base-model setting.

    Parameters:
        beta: reward scale β.
        simpo_gamma: target reward margin γ.
        cpo_alpha: weight of the NLL term on chosen answers; 0 makes the loss pure SimPO.
    """

    trainer: ClassVar[TrainerName] = "simpo"
    data_kind: ClassVar[str | None] = "pref"
    beta: float = 2.0
    simpo_gamma: float = 1.0
    cpo_alpha: float = 0.0
    max_length: int = 2048

    def validate(self) -> None:
        super().validate()
        if self.beta <= 0:
            raise RecipeError(f"beta must be positive, got {self.beta}")


@dataclass
class RlvrRecipe(TrainRecipe):
    """RLVR (card section 6): TRL's `GRPOTrainer` on generation-pool prompts, checker reward.

    Rollouts are drawn as served (k0 + user prompt); the reward of a completion is
    `reward_pass_weight` x (every check passed) + `reward_fraction_weight` x (fraction of checks
    passed) (`rsi_hub.train.reward.CheckerReward`). `mix`, `sources`, `dataset`, `system` and
    `max_length` are not used: the data are the prompts. Names follow TRL's `GRPOConfig`.

    Parameters:
        prompts: `pool` (the suites' generation pool, eligible prompts only) or a JSONL prompt
            file of `{"id", "prompt", "checks"}` records (held-out prompts are refused).
        limit: use the first N eligible prompts (`null`: all).
        reward_pass_weight: weight of "every check passed" (0/1).
        reward_fraction_weight: weight of the fraction of checks passed.
        num_generations: completions per prompt (the GRPO group).
        max_completion_length: longest rollout in tokens.
        temperature, top_p: rollout sampling.
        beta: KL coefficient (0: no reference model).
        loss_type: GRPO loss normalisation (`dapo`, `grpo`, `dr_grpo`, `bnpo`).
        mask_truncated_completions: leave rollouts cut at `max_completion_length` out of the loss.
        use_vllm: draw rollouts with vLLM; `vllm_mode`, `vllm_gpu_memory_utilization` and
            `vllm_tensor_parallel_size` (colocated engines shard the policy over this many GPUs)
            configure it.
        save_steps: optimizer steps between checkpoints; 0 saves only the final model.
    """

    trainer: ClassVar[TrainerName] = "rlvr"
    positive_fields: ClassVar[tuple[str, ...]] = (
        "max_steps", "per_device_train_batch_size", "gradient_accumulation_steps",
        "logging_steps", "num_generations", "max_completion_length",
    )  # fmt: skip
    prompts: str = "pool"
    limit: int | None = None
    reward_pass_weight: float = 1.0
    reward_fraction_weight: float = 0.5
    num_generations: int = 8
    max_completion_length: int = 1024
    temperature: float = 0.8
    top_p: float = 0.95
    beta: float = 0.0
    loss_type: str = "dapo"
    mask_truncated_completions: bool = True
    use_vllm: bool = False
    vllm_mode: str = "colocate"
    vllm_gpu_memory_utilization: float = 0.35
    vllm_tensor_parallel_size: int = 1
    learning_rate: float = 1e-6
    lr_scheduler_type: str = "constant_with_warmup"
    warmup_steps: int = 10
    weight_decay: float = 0.0
    per_device_train_batch_size: int = 8
    gradient_accumulation_steps: int = 4
    max_steps: int = 200
    activation_checkpointing: bool = True
    logging_steps: int = 1
    save_steps: int = 50

    def validate(self) -> None:
        super().validate()
        _choice("vllm_mode", self.vllm_mode, ("colocate", "server"))
        if self.save_steps < 0:
            raise RecipeError(
                f"save_steps must be 0 (final model only) or more, got {self.save_steps}"
            )
        if self.limit is not None and self.limit <= 0:
            raise RecipeError(f"limit must be positive or null, got {self.limit}")


RECIPE_CLASSES: dict[str, type[TrainRecipe]] = {
    "sft": SFTRecipe,
    "simpo": SimPORecipe,
    "rlvr": RlvrRecipe,
}


def _choice(name: str, value: Any, allowed: tuple[str, ...]) -> None:
    if value not in allowed:
        raise RecipeError(f"{name} must be one of {', '.join(allowed)}; got {value!r}")


def available_recipes() -> list[str]:
    """Names of the recipes shipped in `rsi_hub/train/recipes/`."""
    return sorted(p.stem for p in RECIPES_DIR.glob("*.yaml"))


def recipe_path(name_or_path: str) -> Path:
    """The YAML file of a shipped recipe name, or `name_or_path` itself if it is a file.

    Raises:
        RecipeError: neither a shipped recipe nor an existing file.
    """
    candidate = Path(name_or_path)
    if candidate.suffix in {".yaml", ".yml"} and candidate.is_file():
        return candidate
    shipped = RECIPES_DIR / f"{name_or_path}.yaml"
    if shipped.is_file():
        return shipped
    raise RecipeError(
        f"no recipe {name_or_path!r}: give one of {', '.join(available_recipes())} or a YAML file path"
    )


def _field_types(cls: type[TrainRecipe]) -> dict[str, Any]:
    hints = typing.get_type_hints(cls)
    return {f.name: hints[f.name] for f in dataclasses.fields(cls)}


def _coerce(key: str, annotation: Any, value: Any) -> Any:
    # Values come from YAML (already typed, but PyYAML reads `3e-6` as a string) or from the
    # command line (always strings): convert to the field's type or fail naming the key.
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if origin in (typing.Union, types.UnionType):
        is_null = value is None or (
            isinstance(value, str) and value.lower() in {"none", "null", "~"}
        )
        if is_null and type(None) in args:
            return None
        inner = [a for a in args if a is not type(None)]
        return _coerce(key, inner[0], value)
    try:
        if annotation is bool:
            if isinstance(value, bool):
                return value
            lowered = str(value).lower()
            if lowered in {"true", "yes", "1", "on"}:
                return True
            if lowered in {"false", "no", "0", "off"}:
                return False
            raise ValueError(value)
        if annotation is int:
            if isinstance(value, bool) or (isinstance(value, float) and not value.is_integer()):
                raise ValueError(value)
            return int(str(value).replace("_", "")) if isinstance(value, str) else int(value)
        if annotation is float:
            if isinstance(value, bool):
                raise ValueError(value)
            return float(value)
        if annotation is str:
            if isinstance(value, dict | list):
                raise ValueError(value)
            return str(value)
        if origin is dict:
            if not isinstance(value, dict):
                raise ValueError(value)
            return {str(k): str(v) for k, v in value.items()}
    except (TypeError, ValueError):
        type_name = getattr(annotation, "__name__", str(annotation))
        raise RecipeError(f"{key}={value!r} is not a valid {type_name}") from None
    raise RecipeError(f"{key}: unsupported field type {annotation}")


def _unknown_key(key: str, valid: list[str]) -> RecipeError:
    close = difflib.get_close_matches(key, valid, n=1)
    hint = f" (did you mean {close[0]}?)" if close else ""
    return RecipeError(f"unknown recipe key {key!r}{hint}; valid keys: {', '.join(valid)}")


def _apply(values: dict[str, Any], updates: dict[str, Any], types_: dict[str, Any]) -> None:
    valid = sorted(types_)
    for key, value in updates.items():
        head, _, sub = key.partition(".")
        if head not in types_:
            raise _unknown_key(key, valid)
        if sub:
            if typing.get_origin(types_[head]) is not dict:
                raise RecipeError(f"{key}: {head} is not a mapping; write {head}=VALUE")
            values[head] = {**values.get(head, {}), sub: str(value)}
        else:
            values[head] = _coerce(key, types_[head], value)


def parse_overrides(pairs: list[str]) -> dict[str, str]:
    """Split `key=value` strings into a mapping (values stay strings until typed).

    Raises:
        RecipeError: an item without `=`.
    """
    out: dict[str, str] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise RecipeError(f"override {pair!r} is not key=value")
        out[key.strip()] = value
    return out


def load_recipe(
    name_or_path: str,
    overrides: list[str] | dict[str, Any] | None = None,
    *,
    trainer: TrainerName | None = None,
) -> TrainRecipe:
    """Load a recipe, apply overrides, type-check and validate it.

    Args:
        name_or_path: a shipped recipe name (`b1`, `LA2b200s`, `simpoN`, `rlvr`, `smoke`, ...)
            or a YAML file.
        overrides: `key=value` strings (command line) or a mapping (Python callers).
        trainer: the trainer the caller runs; a recipe for the other trainer is an error.

    Returns:
        An `SFTRecipe`, `SimPORecipe` or `RlvrRecipe`, validated.

    Raises:
        RecipeError: unknown recipe or key, a value of the wrong type, an invalid value, or a
            recipe for the other trainer.
    """
    path = recipe_path(name_or_path)
    data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    if not isinstance(data, dict):
        raise RecipeError(f"{path}: a recipe is a YAML mapping of keys to values")
    kind = data.pop("trainer", None)
    if kind not in RECIPE_CLASSES:
        raise RecipeError(
            f"{path}: `trainer` must be one of {', '.join(RECIPE_CLASSES)}; got {kind!r}"
        )
    if trainer is not None and kind != trainer:
        raise RecipeError(
            f"recipe {name_or_path!r} is a {kind} recipe; run `rsi-hub train {kind} --recipe {name_or_path}`"
        )
    cls = RECIPE_CLASSES[kind]
    types_ = _field_types(cls)
    values: dict[str, Any] = {"name": path.stem}
    _apply(values, data, types_)
    if isinstance(overrides, list):
        overrides = parse_overrides(overrides)
    _apply(values, dict(overrides or {}), types_)
    recipe = cls(**values)
    recipe.validate()
    return recipe


def recipe_yaml(recipe: TrainRecipe) -> str:
    """The resolved recipe as YAML, keys in field order."""
    return yaml.safe_dump(recipe.to_dict(), sort_keys=False, allow_unicode=True)
