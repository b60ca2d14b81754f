"""FSDP2 executed: `accelerate launch --config_file launch/accelerate_fsdp2_cpu.yaml -m rsi_hub
train ...` on 2 gloo CPU processes trains the tiny checkpoint fully sharded, as one process with
the same global batch does, saves sharded checkpoints, resumes a SIGKILLed run to the same
weights, and leaves a consolidated, served run directory. SFT (SFTTrainer) and SimPO
(CPOTrainer)."""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
GPU_CONFIG = ROOT / "launch" / "accelerate_fsdp2_4gpu.yaml"
CPU_CONFIG = ROOT / "launch" / "accelerate_fsdp2_cpu.yaml"

# The only keys the CPU config may change, (4-GPU value, CPU value), and why:
CPU_ONLY_DIFFERENCES: dict[str, tuple[Any, Any]] = {
    "num_processes": (4, 2),  # two CPU processes (this machine has 2 cores)
    "use_cpu": (False, True),  # gloo CPU processes instead of NCCL on GPUs
    "mixed_precision": ("bf16", "no"),  # the CPU recipes compute in FP32 (bf16: false)
}

# Per-step training loss of 2 FSDP processes x 4 sequences against 1 process x 8 sequences on the
# same data order (absolute, on losses of 1-7). Not bit-equal: gloo's reduce-scatter sums the
# gradients in another order, and each rank draws the stochastic rounding of its shard of the
# BF16 Adam moments from its own RNG. Measured: 8.1e-5 (SFT), 6.7e-6 (SimPO).
LOSS_PARITY_TOLERANCE = 1e-3
# A run SIGKILLed after checkpoint-3 and relaunched must end on exactly the uninterrupted run's
# weights: the sharded checkpoint restores every rank's parameter and moment shards, the
# scheduler, each rank's RNG (the stochastic rounding draws from it) and the data position.
RESUME_WEIGHT_TOLERANCE = 0.0
STEPS = 6
KILL_AFTER = 3
# 32 rows: 4 optimizer steps of 8 rows per epoch, none short, so that no process ever pads a
# batch (accelerate's even_batches would repeat rows on one rank and not on one process).
# Six steps cross an epoch boundary, and its reshuffle, on both sides.
SFT_OVERRIDES = [
    f"max_steps={STEPS}", f"save_steps={KILL_AFTER}", "logging_steps=1", "max_length=256",
    "system=keep", "mix=demo:32",
]  # fmt: skip
# 16 pairs: 2 steps of 8 pairs per epoch.
SIMPO_OVERRIDES = [
    "max_steps=4",
    "save_steps=2",
    "logging_steps=1",
    "max_length=256",
    "system=keep",
]
LAUNCH_TIMEOUT_S = 300


def _flatten(data: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in data.items():
        if isinstance(value, dict):
            out.update(_flatten(value, f"{prefix}{key}."))
        else:
            out[f"{prefix}{key}"] = value
    return out


def test_cpu_config_is_the_gpu_config_but_for_what_a_cpu_needs() -> None:
    gpu = _flatten(yaml.safe_load(GPU_CONFIG.read_text()))
    cpu = _flatten(yaml.safe_load(CPU_CONFIG.read_text()))
    assert set(gpu) == set(cpu), f"keys only in one file: {sorted(set(gpu) ^ set(cpu))}"
    differing = {key: (gpu[key], cpu[key]) for key in gpu if gpu[key] != cpu[key]}
    assert differing == CPU_ONLY_DIFFERENCES
    assert cpu["distributed_type"] == "FSDP" and cpu["fsdp_config.fsdp_version"] == 2


def _env() -> dict[str, str]:
    # The workers import this checkout's rsi_hub (and tests/), whatever is installed.
    path = os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    return {**os.environ, "PYTHONPATH": path, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1",
            "TOKENIZERS_PARALLELISM": "false"}  # fmt: skip


def _launch(module_args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    command = [
        sys.executable, "-m", "accelerate.commands.launch", "--config_file", str(CPU_CONFIG),
        "--main_process_port", "0", "-m", *module_args,
    ]  # fmt: skip
    return subprocess.run(
        command, cwd=cwd, env=_env(), capture_output=True, text=True, timeout=LAUNCH_TIMEOUT_S
    )


def _train_2proc(trainer: str, recipe: str, overrides: list[str], run: Path) -> Path:
    argv = ["rsi_hub", "train", trainer, "--recipe", recipe, *overrides, f"output_dir={run}"]
    run.parent.mkdir(parents=True, exist_ok=True)
    done = _launch(argv, run.parent)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-6000:]
    # One summary line for the launch, from rank 0 only.
    assert done.stdout.count(f"{run}: ") == 1, done.stdout
    return run


def _losses(run: Path) -> list[float]:
    checkpoints = sorted((run / "checkpoints").glob("checkpoint-*"), key=lambda p: int(p.name[11:]))
    state = json.loads((checkpoints[-1] / "trainer_state.json").read_text())
    return [entry["loss"] for entry in state["log_history"] if "loss" in entry]


def _weights(run: Path) -> dict[str, Any]:
    from safetensors.torch import load_file

    return load_file(str(run / "model.safetensors"))


def _one_process(trainer: str, recipe: str, overrides: list[str], run: Path, batch: int) -> Path:
    """The same recipe in this process, `batch` sequences per step, on one torch thread (as each
    launched worker runs): two OpenMP threads on a shared 2-core machine spin, 5 s become 30."""
    import torch

    from rsi_hub.train import load_recipe, train

    chosen = load_recipe(recipe, [*overrides, f"output_dir={run}",
                                  f"per_device_train_batch_size={batch}"], trainer=trainer)  # fmt: skip
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        return train(chosen).run_dir
    finally:
        torch.set_num_threads(threads)


@pytest.fixture(scope="module")
def sft_fsdp(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The uninterrupted 2-process FSDP2 SFT run (2 x 4 sequences per step)."""
    run = tmp_path_factory.mktemp("fsdp_sft") / "run"
    return _train_2proc("sft", "smoke", [*SFT_OVERRIDES, "per_device_train_batch_size=4"], run)


@pytest.mark.slow
def test_workers_train_fully_sharded_over_gloo(sft_fsdp: Path) -> None:
    from rsi_hub.rundir import TrainingEvidence

    evidence = TrainingEvidence.read(sft_fsdp)
    launch = evidence.extra["launch"]
    assert launch["distributed_type"] == "FSDP" and launch["backend"] == "gloo"
    assert launch["num_processes"] == launch["world_size"] == evidence.extra["world_size"] == 2
    sharding = launch["sharding"]  # what rank 0 saw at the start of its training loop
    assert sharding["wrapper"] == "fully_shard"
    assert sharding["dtensor_parameters"] == sharding["parameters"] > 0
    assert sharding["fsdp_modules"] > 1  # one per NemotronHBlock, plus the root
    assert abs(sharding["local_fraction"] - 0.5) < 0.01  # rank 0 holds half the elements
    assert launch["launcher"] == "accelerate launch"
    assert launch["config_file"] == str(CPU_CONFIG)
    assert launch["config_sha256"] == hashlib.sha256(CPU_CONFIG.read_bytes()).hexdigest()
    assert evidence.hyperparameters["sequences_per_step"] == 8
    assert [a["launcher"] for a in evidence.attempts] == ["accelerate launch"]
    assert evidence.attempts[0]["launch_config_sha256"] == launch["config_sha256"]


@pytest.mark.slow
def test_loss_matches_one_process_with_the_same_global_batch(
    sft_fsdp: Path, tmp_path: Path
) -> None:
    from rsi_hub.rundir import TrainingEvidence

    single = _one_process("sft", "smoke", SFT_OVERRIDES, tmp_path / "run", batch=8)
    two, one = TrainingEvidence.read(sft_fsdp), TrainingEvidence.read(single)
    assert two.dataset_sha256 == one.dataset_sha256  # the same rows
    assert one.hyperparameters["sequences_per_step"] == two.hyperparameters["sequences_per_step"]
    fsdp, reference = _losses(sft_fsdp), _losses(single)
    assert len(fsdp) == len(reference) == STEPS
    worst = max(abs(a - b) for a, b in zip(fsdp, reference, strict=True))
    print(f"SFT loss parity, 2 FSDP processes vs 1 process: max |dloss| = {worst:.2e}")
    assert worst <= LOSS_PARITY_TOLERANCE, (fsdp, reference)
    assert fsdp[-1] < fsdp[0]  # and it trains


@pytest.mark.slow
def test_checkpoints_are_sharded(sft_fsdp: Path) -> None:
    checkpoint = sft_fsdp / "checkpoints" / f"checkpoint-{KILL_AFTER}"
    model = checkpoint / "pytorch_model_fsdp_0"  # torch.distributed.checkpoint, one file per rank
    assert sorted(p.name for p in model.glob("*.distcp")) == ["__0_0.distcp", "__1_0.distcp"]
    assert (model / ".metadata").is_file()
    assert sorted(p.name for p in (checkpoint / "optimizer_0").glob("*.distcp")) == [
        "__0_0.distcp",
        "__1_0.distcp",
    ]
    assert (checkpoint / "rng_state_0.pth").is_file() and (checkpoint / "rng_state_1.pth").is_file()
    assert not list(checkpoint.glob("*.safetensors"))  # nothing gathered into a full copy


@pytest.mark.slow
def test_killed_run_resumes_to_the_same_weights(sft_fsdp: Path, tmp_path: Path) -> None:
    from rsi_hub.rundir import TrainingEvidence

    run = tmp_path / "run"
    overrides = [*SFT_OVERRIDES, "per_device_train_batch_size=4", f"output_dir={run}"]
    killed = _launch(
        ["tests.fsdp_kill_worker", str(KILL_AFTER), "sft", "smoke", *overrides], tmp_path
    )
    assert killed.returncode == -signal.SIGKILL, killed.stderr[-4000:]
    assert TrainingEvidence.read(run).status == "running"
    assert [p.name for p in (run / "checkpoints").glob("checkpoint-*")] == [
        f"checkpoint-{KILL_AFTER}"
    ]
    assert not (run / "model.safetensors").exists()

    _train_2proc("sft", "smoke", overrides[:-1], run)  # the ordinary command, relaunched
    evidence = TrainingEvidence.read(run)
    assert evidence.completed and evidence.optimizer_steps == STEPS
    assert [a["resumed_from"] for a in evidence.attempts] == [None, f"checkpoint-{KILL_AFTER}"]
    assert _losses(run) == _losses(sft_fsdp)
    full, resumed = _weights(sft_fsdp), _weights(run)
    assert full.keys() == resumed.keys()
    worst = max((full[k].float() - resumed[k].float()).abs().max().item() for k in full)
    print(f"resume after SIGKILL at step {KILL_AFTER}: max |dweight| = {worst:.1e}")
    assert worst <= RESUME_WEIGHT_TOLERANCE


def _check_served(run: Path) -> None:
    from transformers import pipeline

    from rsi_hub.cli import main

    assert main(["validate", str(run)]) == 0
    generate = pipeline("text-generation", model=str(run))
    out = generate([{"role": "user", "content": "Say hello."}], max_new_tokens=4, do_sample=False)
    assert out[0]["generated_text"][-1]["role"] == "assistant"


@pytest.mark.slow
def test_final_weights_are_consolidated_and_served(sft_fsdp: Path) -> None:
    from safetensors import safe_open

    base = _weights(sft_fsdp / "base")
    final = _weights(sft_fsdp)
    # One full (gathered) tensor per weight, of the full shape: not rank 0's shard.
    assert sorted(p.name for p in sft_fsdp.glob("model*.safetensors")) == ["model.safetensors"]
    assert {k: v.shape for k, v in final.items()} == {k: v.shape for k, v in base.items()}
    assert any((final[k] != base[k]).any() for k in base)  # trained
    with safe_open(str(sft_fsdp / "model.safetensors"), "pt") as f:
        assert f.metadata().get("format") == "pt"
    _check_served(sft_fsdp)


@pytest.mark.slow
def test_simpo_trains_fully_sharded_like_one_process(tmp_path: Path) -> None:
    from rsi_hub.rundir import TrainingEvidence

    run = _train_2proc(
        "simpo", "smoke_simpo", [*SIMPO_OVERRIDES, "per_device_train_batch_size=4"],
        tmp_path / "fsdp" / "run",
    )  # fmt: skip
    evidence = TrainingEvidence.read(run)
    assert evidence.extra["trainer"].startswith("trl.experimental.cpo.CPOTrainer")
    launch = evidence.extra["launch"]
    assert launch["distributed_type"] == "FSDP" and launch["sharding"]["wrapper"] == "fully_shard"
    assert launch["config_sha256"] == hashlib.sha256(CPU_CONFIG.read_bytes()).hexdigest()
    assert (
        run / "checkpoints" / "checkpoint-2" / "pytorch_model_fsdp_0" / "__1_0.distcp"
    ).is_file()

    single = _one_process("simpo", "smoke_simpo", SIMPO_OVERRIDES, tmp_path / "one" / "run", 8)
    fsdp, reference = _losses(run), _losses(single)
    assert len(fsdp) == len(reference) == 4
    worst = max(abs(a - b) for a, b in zip(fsdp, reference, strict=True))
    print(f"SimPO loss parity, 2 FSDP processes vs 1 process: max |dloss| = {worst:.2e}")
    assert worst <= LOSS_PARITY_TOLERANCE, (fsdp, reference)
    _check_served(run)
