"""`--dry-run`: resolve and check a recipe without loading a model or reading data.

It builds the TRL config object (so every argument name and value is checked by TRL and
transformers themselves), parses the mix, looks for local sources and the launch config, says
whether the `gpu` extra is present, whether a relaunch would resume, and prints the exact
commands that would run.
"""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Any

import yaml

from rsi_hub.data.mix import parse_mix
from rsi_hub.data.sources import get_source
from rsi_hub.shipped import resource_path
from rsi_hub.train.launch import accelerate_command, launch_config_path, missing_gpu_kernels
from rsi_hub.train.packing import PACK_SHARD_ROWS
from rsi_hub.train.recipes import RANDOM_INIT_MODELS, TrainRecipe
from rsi_hub.train.run import CHECKPOINTS_DIR, DATA_DIR, _hyperparameters, trl_arguments, trl_config


def _source_status(recipe: TrainRecipe) -> list[dict[str, Any]]:
    if recipe.data_kind is None:  # RLVR: the prompts are the data
        prompts = getattr(recipe, "prompts", "pool")
        if prompts == "pool":
            return [{"item": "pool", "from": "rsi_hub.suites generation pool", "status": "found"}]
        found = "found" if Path(prompts).is_file() else "MISSING"
        return [{"item": prompts, "from": f"path:{prompts}", "status": found}]
    out = []
    for item in parse_mix(recipe.mix):
        source = get_source(item.name)
        override = recipe.sources.get(item.name)
        if override is not None:
            where, ready = f"path:{override}", Path(override).exists()
        elif source.resource is not None:
            where, ready = source.origin, resource_path(source.resource).is_file()
        elif source.hf_id is None:
            where, ready = source.origin, Path(str(source.local_default)).exists()
        else:
            where, ready = source.origin, None  # a Hub dataset: downloaded or cached at launch
        status = {
            True: "found",
            False: "MISSING",
            None: "Hub dataset (read from cache or downloaded at launch)",
        }
        out.append({"item": str(item), "from": where, "status": status[ready]})
    return out


def _launch_summary(recipe: TrainRecipe, argv: list[str]) -> dict[str, Any]:
    config_path = launch_config_path(recipe)
    summary: dict[str, Any] = {}
    if recipe.num_gpus > 1 and config_path is not None:
        config = yaml.safe_load(config_path.read_text(encoding="utf-8"))
        fsdp = config.get("fsdp_config", {})
        summary["accelerate_config"] = str(config_path)
        summary["distributed"] = {
            "distributed_type": config.get("distributed_type"),
            "fsdp_version": fsdp.get("fsdp_version"),
            "mixed_precision": config.get("mixed_precision"),
            "num_processes": config.get("num_processes"),
            "wrap": fsdp.get("fsdp_transformer_layer_cls_to_wrap"),
            "activation_checkpointing": fsdp.get("fsdp_activation_checkpointing"),
            "state_dict_type": fsdp.get("fsdp_state_dict_type"),
        }
        summary["command"] = shlex.join(accelerate_command(recipe, argv))
        summary["slurm"] = shlex.join(
            ["sbatch", "launch/slurm_train.sbatch", recipe.trainer, *argv[3:]]
        )
    else:
        summary["command"] = shlex.join(["rsi-hub", *argv])
    return summary


def describe(recipe: TrainRecipe, argv: list[str] | None = None) -> dict[str, Any]:
    """Everything a launch of `recipe` would use, checked, without loading a model.

    Args:
        recipe: a loaded recipe.
        argv: the rsi-hub arguments of the launch (`["train", "sft", "--recipe", NAME, ...]`).

    Raises:
        RecipeError: a value TRL/transformers reject, or a missing launch config.
    """
    argv = argv or ["train", recipe.trainer, "--recipe", recipe.name]
    recipe.validate()
    import torch

    # TRL/transformers check every argument when the config is built; on a machine without a
    # GPU they refuse bf16 unless told the run is on CPU, so say so for the check alone.
    on_gpu = torch.cuda.is_available()
    trl_config(recipe) if on_gpu else trl_config(recipe, use_cpu=True)
    run_dir = recipe.run_dir
    checkpoints = run_dir / CHECKPOINTS_DIR
    last = (
        sorted(checkpoints.glob("checkpoint-*"), key=lambda p: int(p.name.split("-")[-1]))
        if checkpoints.is_dir()
        else []
    )
    missing = missing_gpu_kernels()
    packed = recipe.packed
    gpu_extra = "present" if not missing else f"missing ({', '.join(missing)})"
    if packed and missing:
        gpu_extra += ": REQUIRED by packing=true, the launch machine must have it"
    trainer = {"sft": "rsi_hub.train.trainers.RsiSFTTrainer (trl.SFTTrainer)",
               "simpo": "rsi_hub.train.trainers.RsiSimPOTrainer (trl.experimental.cpo.CPOTrainer)",
               "rlvr": "rsi_hub.train.trainers.RsiGRPOTrainer (trl.GRPOTrainer)"}  # fmt: skip
    if recipe.data_kind is None:
        prompts = getattr(recipe, "prompts", "")
        data = f"{run_dir / 'rlvr_prompts.jsonl'} (selected from prompts={prompts} at launch)"
    else:
        data = (
            recipe.dataset
            or f"{run_dir / DATA_DIR} (prepared from the mix at launch, reused if unchanged)"
        )
    return {
        "recipe": recipe.to_dict(),
        "resolved": {
            "run_dir": str(run_dir),
            "checkpoints": str(checkpoints),
            "data": data,
            "model": f"{run_dir / 'base'} ({recipe.model} checkpoint built at launch)"
            if recipe.model in RANDOM_INIT_MODELS
            else recipe.model,
            "trainer": trainer[recipe.trainer],
            "optimizer": (
                f"BF16MomentAdamW: FP32 master weights, {recipe.optimizer_state_dtype} moments"
                + (
                    " with stochastic rounding"
                    if recipe.optimizer_state_dtype == "bfloat16"
                    else ""
                )
                + f"; weight decay {recipe.weight_decay} except A_log, D, norms, biases"
            ),
            "hyperparameters": _hyperparameters(recipe, max(recipe.num_gpus, 1)),
            "packing": (
                f"rsi_hub.train.packing.pack_for_training: TRL {getattr(recipe, 'packing_strategy', 'bfd')} "
                f"into {recipe.max_length}-token sequences over {PACK_SHARD_ROWS:,}-row shards, then "
                "TRL trains padding-free (seq_idx keeps documents apart)"
                if packed
                else "none (one row per sequence, padded per batch)"
            ),
            "sources": _source_status(recipe),
        },
        "trl_config": trl_arguments(recipe),
        "launch": _launch_summary(recipe, argv),
        "checks": {
            "trl_config": "built and validated by TRL/transformers"
            + ("" if on_gpu else " (with use_cpu=True: this machine has no GPU)"),
            "gpu_extra": gpu_extra,
            "resume": f"would resume from {last[-1].name}"
            if last
            else "fresh start (no checkpoint yet)",
        },
    }


def describe_yaml(recipe: TrainRecipe, argv: list[str] | None = None) -> str:
    """`describe` as YAML text, as `--dry-run` prints it."""
    return yaml.safe_dump(describe(recipe, argv), sort_keys=False, allow_unicode=True, width=100)
