"""Launching: the `gpu` extra check for packed runs, and the accelerate command of a recipe.

Packed training is padding-free: several rows share one sequence and only `seq_idx` /
`cu_seq_lens` keep them apart. The attention layers honour that through FlashAttention, the
Mamba layers only through the CUDA kernels of `mamba_ssm` and `causal_conv1d`; the PyTorch
fallback would let each document's Mamba state leak into the next. So a packed recipe refuses
to start without the `gpu` extra instead of training on silently mixed documents.
"""

from __future__ import annotations

import importlib.util
import os
import shlex
import sys
from pathlib import Path

from rsi_hub.distributed import under_launcher
from rsi_hub.errors import MissingGpuExtraError, RecipeError, ShippedFileMissingError
from rsi_hub.shipped import shipped_file
from rsi_hub.train.recipes import TrainRecipe

# Module -> pip distribution of the `gpu` extra needed by packed training.
PACKED_KERNELS = {
    "mamba_ssm": "mamba-ssm",
    "causal_conv1d": "causal-conv1d",
    "flash_attn": "flash-attn",
}
LAUNCH_DIR_NAME = "launch"


def missing_gpu_kernels() -> list[str]:
    """Distributions of the `gpu` extra whose module cannot be imported here."""
    return [
        dist for module, dist in PACKED_KERNELS.items() if importlib.util.find_spec(module) is None
    ]


def require_packing_support(recipe: TrainRecipe) -> None:
    """Stop a packed recipe on a machine without the Mamba/attention CUDA kernels.

    Raises:
        MissingGpuExtraError: naming the missing packages and the two ways forward.
    """
    if not recipe.packed:
        return
    missing = missing_gpu_kernels()
    if missing:
        raise MissingGpuExtraError(
            f"recipe {recipe.name} trains on packed sequences, which needs the `gpu` extra "
            f"(missing: {', '.join(missing)}): the Mamba layers keep packed documents apart only "
            "through seq_idx in the CUDA kernels. Install it on a CUDA machine with "
            '`pip install -e ".[train,gpu]"`, or train unpacked with the override packing=false.'
        )


def launch_config_path(recipe: TrainRecipe) -> Path | None:
    """The recipe's accelerate config file: in the working folder, else the shipped `launch/`.

    Raises:
        RecipeError: the file does not exist.
    """
    if not recipe.launch_config:
        return None
    candidate = Path.cwd() / recipe.launch_config
    if candidate.is_file():
        return candidate
    try:
        return shipped_file(recipe.launch_config)
    except ShippedFileMissingError as err:
        raise RecipeError(
            f"launch_config {recipe.launch_config!r} not found in {Path.cwd()} nor shipped ({err})"
        ) from err


def accelerate_command(recipe: TrainRecipe, argv: list[str]) -> list[str]:
    """The `accelerate launch` command that runs `rsi-hub <argv>` on the recipe's GPUs.

    Args:
        recipe: the resolved recipe (its `launch_config` and `num_gpus`).
        argv: the rsi-hub arguments, e.g. `["train", "sft", "--recipe", "LA2b200s"]`.
    """
    config = launch_config_path(recipe)
    command = ["accelerate", "launch"]
    if config is not None:
        command += ["--config_file", str(config)]
    command += ["--num_processes", str(max(recipe.num_gpus, 1)), "-m", "rsi_hub", *argv]
    return command


def relaunch_if_needed(recipe: TrainRecipe, argv: list[str]) -> None:
    """Re-execute this command under `accelerate launch` when a multi-GPU recipe runs bare.

    `rsi-hub train sft --recipe LA2b200s` on a 4-GPU node thus becomes one process per GPU with
    the recipe's FSDP2 config; inside the launcher (or under Slurm's srun template) nothing
    happens.

    Raises:
        RecipeError: the recipe wants more GPUs than this machine has.
    """
    if recipe.num_gpus <= 1 or under_launcher():
        return
    import torch

    available = torch.cuda.device_count()
    if available < recipe.num_gpus:
        raise RecipeError(
            f"recipe {recipe.name} is for {recipe.num_gpus} GPUs and this machine has {available}: "
            "run it on a GPU node (see launch/slurm_train.sbatch), or override num_gpus=... "
            "(and packing=false on a machine without CUDA)"
        )
    command = accelerate_command(recipe, argv)
    print("launching: " + shlex.join(command), file=sys.stderr, flush=True)
    os.execvp(command[0], command)


SLURM_TEMPLATE = Path(LAUNCH_DIR_NAME) / "slurm_train.sbatch"
# CPUs a CPU recipe's job asks for (one training process; torch uses the task's CPU).
CPU_RECIPE_CPUS = 1


def slurm_template_path() -> Path:
    """Train's Slurm template: `launch/slurm_train.sbatch` of the working folder, else shipped.

    Raises:
        ShippedFileMissingError: neither exists.
    """
    candidate = Path.cwd() / SLURM_TEMPLATE
    return candidate if candidate.is_file() else shipped_file(SLURM_TEMPLATE)


def slurm_resources(num_gpus: int, cpus_per_gpu: int) -> dict[str, str | None]:
    """The template's `#SBATCH` resources for a recipe on `num_gpus` GPUs per node.

    A CPU recipe (num_gpus 0) asks for no GPU (None: drop the directive) and one CPU, and
    `GPUS_PER_NODE=0` makes the template run one plain process instead of accelerate.
    """
    if num_gpus <= 0:
        return {"--gpus-per-node=": None, "--cpus-per-task=": str(CPU_RECIPE_CPUS)}
    return {"--gpus-per-node=": str(num_gpus), "--cpus-per-task=": str(num_gpus * cpus_per_gpu)}


def slurm_submit_args(
    recipe: TrainRecipe,
    template_args: list[str],
    *,
    log_dir: str | Path = "logs",
    extra: tuple[str, ...] = (),
) -> list[str]:
    """`sbatch` arguments that submit `recipe` through train's template, as is.

    Options given to sbatch override the template's `#SBATCH` lines: the job is named after
    the run, logs to `log_dir`, and a CPU recipe asks for no GPU (`--gpus-per-node=0`).

    Args:
        recipe: the resolved recipe (its name and GPUs).
        template_args: the template's arguments: TRAINER RECIPE KEY=VALUE ...
        log_dir: folder of the job logs (created by the caller before submitting).
        extra: further sbatch options, e.g. `--partition=debug`.
    """
    gpus = max(int(recipe.num_gpus), 0)
    args = [
        f"--job-name={Path(recipe.run_dir).name}-train",
        f"--output={log_dir}/%x-%j.out",
        f"--export=ALL,GPUS_PER_NODE={gpus}",
    ]
    if gpus == 0:
        args += ["--gpus-per-node=0", f"--cpus-per-task={CPU_RECIPE_CPUS}"]
    return [*args, *extra, str(slurm_template_path()), *template_args]
