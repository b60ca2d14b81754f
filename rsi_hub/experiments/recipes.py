"""The one place `rsi_hub.experiments` touches `rsi_hub.train`.

Sweeps name recipes and `key=value` overrides exactly as `rsi-hub train` takes them; parsing
and validating them is the train package's job (`rsi_hub.train.recipes`), called from here, so
that a typo in a grid key fails before anything is submitted, with train's own message.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rsi_hub.errors import ExperimentFileError

# Short grid keys for the two settings card sweeps vary, mapped to the recipe field names.
KEY_ALIASES: dict[str, str] = {"lr": "learning_rate", "steps": "max_steps"}


def _recipes() -> Any:
    # At call time: rsi_hub.train loads torch, which a sweep's listing commands do not need.
    from rsi_hub.train import recipes

    return recipes


@dataclass(frozen=True)
class ResolvedArm:
    """What a sweep needs to know of one arm's resolved recipe."""

    trainer: str
    num_gpus: int
    run_dir: Path
    recipe: dict[str, Any]


def recipe_key(key: str) -> str:
    """The recipe field a grid or `--set` key names (`lr` -> `learning_rate`)."""
    return KEY_ALIASES.get(key, key)


def parse_overrides(pairs: list[str]) -> dict[str, str]:
    """Split `key=value` strings with train's own parser."""
    return dict(_recipes().parse_overrides(pairs))


def resolve_arm(recipe: str, overrides: dict[str, str]) -> ResolvedArm:
    """Load and validate `recipe` with `overrides` through train's loader.

    Raises:
        RsiHubError: train's `RecipeError` naming the bad key or value.
    """
    resolved = _recipes().load_recipe(recipe, {recipe_key(k): v for k, v in overrides.items()})
    return ResolvedArm(
        trainer=resolved.trainer,
        num_gpus=int(resolved.num_gpus),
        run_dir=Path(resolved.run_dir),
        recipe=resolved.to_dict(),
    )


def slurm_train_template() -> str:
    """The text of train's Slurm template (`launch/slurm_train.sbatch` of the checkout).

    Sweep arms are trained by this very script (multi-node rendezvous, requeue, the
    `train finalize` job), with their arguments filled in, never by a second launcher.
    """
    from rsi_hub.errors import ShippedFileMissingError
    from rsi_hub.train.launch import slurm_template_path

    try:
        return slurm_template_path().read_text()
    except ShippedFileMissingError as err:
        raise ExperimentFileError(
            f"train's Slurm template is missing: {err}", path=err.path
        ) from err


def slurm_resources(num_gpus: int, cpus_per_gpu: int) -> dict[str, str | None]:
    """The template's resource directives for an arm (train's rule: a CPU arm asks no GPU)."""
    from rsi_hub.train.launch import slurm_resources as resources

    return resources(num_gpus, cpus_per_gpu)
