"""Training on the tiny checkpoint on a CPU: SFT lowers the loss, resume reproduces an
uninterrupted run, SimPO raises the reward margin, and the run directory is complete."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
import torch
from safetensors.torch import load_file
from transformers import TrainerCallback

from rsi_hub.chat import BOS_TOKEN, IM_END_TOKEN, SPECIAL_TOKEN_IDS, validate_model_folder
from rsi_hub.data import read_stats
from rsi_hub.errors import RecipeError
from rsi_hub.rundir import TrainingEvidence
from rsi_hub.train import build_trainer, load_recipe, train

pytestmark = pytest.mark.slow

STEPS = 10
INTERRUPT_AT = 4
# Interrupted-and-resumed training must end at the uninterrupted run's loss within this
# (absolute, on a loss of ~4-6). On one CPU the two runs are in practice bit-identical: the
# checkpoint restores weights, BF16 moments, scheduler, RNG (stochastic rounding draws from it)
# and the data position.
RESUME_LOSS_TOLERANCE = 1e-4


class SetMatcher:
    """A stand-in for rsi_hub.suites.HoldoutIndex."""

    def __init__(self, prompts: set[str]) -> None:
        self.prompts = prompts

    def match(self, prompt: str) -> str | None:
        return "holdout-1" if prompt in self.prompts else None


# Held out for the test: a demo prompt that the guard must drop from the training data.
HOLDOUT = SetMatcher({"Say hello."})


class Interrupt(Exception):
    """Simulates a killed job."""


class InterruptAfterSave(TrainerCallback):
    def on_save(self, args, state, control, **kwargs):
        if state.global_step == INTERRUPT_AT:
            raise Interrupt(f"killed after checkpoint-{INTERRUPT_AT}")


_SFT_OVERRIDES = {
    "system": "keep",  # short rows keep the CPU test fast; k0 is covered by prep tests
    "max_steps": STEPS,
    "save_steps": INTERRUPT_AT,
    "logging_steps": 1,
    "max_length": 256,
    "save_dtype": "bfloat16",
}


def _sft_recipe(output_dir: Path, model: str):
    return load_recipe(
        "smoke", {**_SFT_OVERRIDES, "output_dir": str(output_dir), "model": model}, trainer="sft"
    )


@pytest.fixture(scope="module")
def sft_run(tmp_path_factory: pytest.TempPathFactory):
    return train(
        _sft_recipe(tmp_path_factory.mktemp("sft") / "run", "tiny"), holdout_matcher=HOLDOUT
    )


def test_sft_lowers_the_loss(sft_run) -> None:
    losses = sft_run.losses()
    assert len(losses) == STEPS  # logged every step
    assert sum(losses[-3:]) / 3 < losses[0] - 0.5, losses


def test_run_directory_is_served_as_is(sft_run) -> None:
    run_dir = sft_run.run_dir
    validate_model_folder(run_dir)
    tensors = load_file(str(run_dir / "model.safetensors"))
    for name, tensor in tensors.items():
        router = "gate.weight" in name or "e_score_correction_bias" in name
        assert tensor.dtype == (torch.float32 if router else torch.bfloat16), name
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(run_dir)
    assert model.model.layers[1].mixer.gate.weight.dtype == torch.float32
    assert (run_dir / "checkpoints" / f"checkpoint-{STEPS}").is_dir()


def test_training_evidence_has_the_card_fields(sft_run) -> None:
    evidence = json.loads((sft_run.run_dir / "training_evidence.json").read_text())
    assert evidence["status"] == "completed" and evidence["optimizer_steps"] == STEPS
    assert evidence["base_model"]["id"] is None  # the tiny checkpoint has no pretrained lineage
    assert evidence["slurm"] is None  # not under Slurm
    stats = read_stats(sft_run.run_dir / "data")
    assert evidence["data"]["mix"] == "demo:all"
    assert evidence["data"]["dataset_sha256"] == stats["sha256"]
    assert evidence["data"]["holdout"]["dropped"] == 1  # "Say hello." was held out
    hyper = evidence["hyperparameters"]
    assert (hyper["learning_rate"], hyper["max_steps"], hyper["lr_scheduler_type"]) == (
        3e-3,
        STEPS,
        "cosine_with_min_lr",
    )
    assert evidence["precision"]["master_weights"] == "float32"
    assert evidence["precision"]["adam_moments"].startswith("bfloat16")
    assert {"torch", "transformers", "trl", "accelerate", "datasets"} <= set(evidence["libraries"])
    assert evidence["seed"] == 0 and evidence["gpu_count"] == 0
    assert evidence["start_time"] <= evidence["end_time"]
    assert evidence["recipe"]["name"] == "smoke" and evidence["tokens_seen"] > 0


def test_completed_run_is_not_trained_again(sft_run) -> None:
    again = train(_sft_recipe(sft_run.run_dir, "tiny"), holdout_matcher=HOLDOUT)
    assert again.skipped and again.evidence.optimizer_steps == STEPS


def test_killed_run_resumes_to_the_same_loss(sft_run, tiny_run: Path, tmp_path: Path) -> None:
    # Same weights as `tiny` (same seed), built once per session by the fixture.
    recipe = _sft_recipe(tmp_path / "run", str(tiny_run))
    with pytest.raises(Interrupt):
        train(recipe, callbacks=[InterruptAfterSave()], holdout_matcher=HOLDOUT)
    assert TrainingEvidence.read(recipe.run_dir).status == "running"
    data_file = recipe.run_dir / "data" / "data.arrow"
    prepared_at = data_file.stat().st_mtime_ns

    changed = load_recipe(
        "smoke",
        {
            **_SFT_OVERRIDES,
            "output_dir": str(recipe.run_dir),
            "model": recipe.model,
            "learning_rate": 1e-3,
        },
    )
    with pytest.raises(RecipeError, match="changed: learning_rate"):
        train(changed, holdout_matcher=HOLDOUT)  # a different recipe never resumes this run
    resumed = train(recipe, holdout_matcher=HOLDOUT)  # the same command, relaunched
    assert resumed.resumed_from == f"checkpoint-{INTERRUPT_AT}"
    assert data_file.stat().st_mtime_ns == prepared_at  # prepared data reused, not rebuilt
    assert resumed.evidence.optimizer_steps == STEPS
    assert [a["resumed_from"] for a in resumed.evidence.attempts] == [
        None,
        f"checkpoint-{INTERRUPT_AT}",
    ]
    assert abs(resumed.losses()[-1] - sft_run.losses()[-1]) <= RESUME_LOSS_TOLERANCE
    full = load_file(str(sft_run.run_dir / "model.safetensors"))
    again = load_file(str(resumed.run_dir / "model.safetensors"))
    assert max((full[k].float() - again[k].float()).abs().max().item() for k in full) <= 1e-2


def _simpo_recipe(output_dir: Path, model: Path, **extra):
    return load_recipe(
        "smoke_simpo",
        {"output_dir": str(output_dir), "model": str(model), "system": "keep", "logging_steps": 1,
         "save_steps": 100, "max_length": 256, **extra},
        trainer="simpo",
    )  # fmt: skip


def test_simpo_rows_have_one_im_end_and_no_bos(tiny_run: Path, tmp_path: Path) -> None:
    run = build_trainer(_simpo_recipe(tmp_path / "run", tiny_run), holdout_matcher=HOLDOUT)
    row = run.trainer.train_dataset[0]
    source = read_stats(run.data_dir)
    assert source["kind"] == "pref"
    tokenizer = run.tokenizer
    bos, im_end = SPECIAL_TOKEN_IDS[BOS_TOKEN], SPECIAL_TOKEN_IDS[IM_END_TOKEN]
    for side in ("chosen", "rejected"):
        ids = row[f"{side}_input_ids"]
        assert ids[0] != bos and bos not in ids
        assert (
            ids[-1] == im_end and ids[-2] != im_end and ids.count(im_end) == 2
        )  # k0-less prompt + answer
        text = tokenizer.decode(ids)
        assert text.startswith("<|im_start|>user\n") and text.endswith(IM_END_TOKEN)
        labels = row[f"{side}_labels"]
        supervised = tokenizer.decode(
            [t for t, lab in zip(ids, labels, strict=True) if lab != -100]
        )
        assert supervised.endswith(IM_END_TOKEN) and "<|im_start|>" not in supervised
    assert row["prompt_input_ids"][0] != bos


def _fake_sacct(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, state: str) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    sacct = bin_dir / "sacct"
    # What `sacct -X --noheader --parsable2 --format=JobID,State,ExitCode` prints (the real one
    # runs in tests/test_slurm.py).
    sacct.write_text(f"#!/bin/sh\necho '5773|{state}|0:0'\n")
    sacct.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}:{os.environ['PATH']}")


def test_simpo_smoke_raises_the_reward_margin(tiny_run: Path, tmp_path: Path, monkeypatch) -> None:
    # Launched as Slurm job 5773; the fake sacct says RUNNING while training, COMPLETED after.
    monkeypatch.setenv("SLURM_JOB_ID", "5773")
    _fake_sacct(tmp_path, monkeypatch, "RUNNING")
    result = train(_simpo_recipe(tmp_path / "run", tiny_run, max_steps=12), holdout_matcher=HOLDOUT)
    margins = [e["rewards/margins"] for e in result.log_history if "rewards/margins" in e]
    assert len(margins) >= 12
    assert sum(margins[-3:]) / 3 > margins[0] + 0.1, margins
    validate_model_folder(result.run_dir)
    assert result.evidence.extra["trainer"].startswith("trl.experimental.cpo.CPOTrainer")
    assert result.evidence.hyperparameters["loss_type"] == "simpo"
    assert result.evidence.hyperparameters["cpo_alpha"] == 0.0
    assert result.evidence.slurm == {
        "job_id": "5773",
        "state": None,
        "state_at_end_of_training": "RUNNING",
    }
    _fake_sacct(tmp_path, monkeypatch, "COMPLETED")
    from rsi_hub.cli import main

    assert main(["train", "finalize", str(result.run_dir)]) == 0
    assert TrainingEvidence.read(result.run_dir).slurm_state == "COMPLETED"


def test_packed_path_builds_padding_free_batches(
    tiny_run: Path, tmp_path: Path, monkeypatch
) -> None:
    # The GPU recipes' data path up to the model call (which needs the CUDA kernels): rows are
    # packed by rsi-hub and TRL's collator derives the document boundaries from seq_lengths.
    import rsi_hub.train.launch as launch

    monkeypatch.setattr(launch, "missing_gpu_kernels", lambda: [])
    recipe = load_recipe(
        "smoke",
        {"output_dir": str(tmp_path / "run"), "model": str(tiny_run), "packing": True, "max_length": 512,
         "per_device_train_batch_size": 2},
        trainer="sft",
    )  # fmt: skip
    run = build_trainer(recipe, holdout_matcher=HOLDOUT)
    data = run.trainer.train_dataset
    assert {"input_ids", "labels", "seq_lengths"} <= set(data.column_names)
    prepared_tokens = read_stats(run.data_dir)["total"]["tokens"]
    assert sum(len(ids) for ids in data["input_ids"]) == prepared_tokens  # nothing cut or lost
    for row in data:
        assert sum(row["seq_lengths"]) == len(row["input_ids"]) <= 512
    batch = run.trainer.data_collator([data[0], data[1]])
    assert "attention_mask" not in batch and batch["input_ids"].shape[0] == 1
    starts = (batch["position_ids"][0] == 0).nonzero().flatten().tolist()
    assert len(starts) == len(data[0]["seq_lengths"]) + len(data[1]["seq_lengths"])
    assert batch["seq_idx"][0, starts[-1]] == len(starts) - 1
    assert all(batch["labels"][0, s] == -100 for s in starts)  # no loss across documents
