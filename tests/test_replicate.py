"""`rsi-hub replicate`: every stage for real at a tiny scale, a kill, and re-runs that skip only
what still verifies.

One replication runs per module (the tiny init, 24 teacher prompts, 3 + 2 training steps, 6 fresh
prompts x 2 samples, every model scored on the first 4 prompts of each suite with 16 new tokens):
first in a subprocess killed with SIGKILL as soon as round 0 is recorded, then resumed here.
Three steps teach the tiny model nothing, so round 0 passes none of its samples: round 1 then
trains on its mix's teacher replay alone, and the records and the card say so.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from rsi_hub.errors import ExperimentInputError
from rsi_hub.experiments.replicate import replicate
from rsi_hub.experiments.replicate_config import ReplicateConfig
from rsi_hub.rundir import ReplicateLedger, SynthProvenance, TrainingEvidence, weights_sha256

ROOT = Path(__file__).resolve().parents[1]
TINY = {
    "limit": 4,
    "eval_max_new_tokens": 16,
    "round0_prompts": 24,
    "round0_set": ("model=tiny", "max_steps=3", "per_device_train_batch_size=4", "logging_steps=1"),
    "round1_set": (
        "max_steps=2", "per_device_train_batch_size=4", "logging_steps=1", "mix=rft:all,teacher:8",
    ),
    "rft_prompts": 6,
    "rft_k": 2,
    "rft_max_new_tokens": 24,
    "rft_batch_size": 12,
    "rft_only_checks": ("no_word",),
}  # fmt: skip
DRIVER = """
import sys
from rsi_hub.experiments.replicate import replicate
from rsi_hub.experiments.replicate_config import ReplicateConfig
replicate(ReplicateConfig("nano", out=sys.argv[1], **__KW__))
"""
BEFORE_ROUND1 = ("split", "teacher", "init", "prep0", "round0")


def _config(out: Path) -> ReplicateConfig:
    return ReplicateConfig("nano", out=out, **TINY)


@pytest.fixture(scope="module")
def replicated(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, set[str], object]:
    out = tmp_path_factory.mktemp("replicate") / "nano"
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
    }
    driver = DRIVER.replace("__KW__", repr(TINY))
    process = subprocess.Popen([sys.executable, "-c", driver, str(out)], env=env)
    recorded: set[str] = set()
    deadline = time.monotonic() + 900
    while process.poll() is None and time.monotonic() < deadline:
        ledger = ReplicateLedger.read_if_any(out)  # written atomically: never half a file
        if ledger is not None and "round0" in ledger.stages:
            process.send_signal(signal.SIGKILL)
            break
        time.sleep(0.2)
    process.wait()
    assert process.returncode == -signal.SIGKILL, "the first run ended before it was killed"
    ledger = ReplicateLedger.read_if_any(out)
    assert ledger is not None
    recorded = set(ledger.stages)
    return out, recorded, replicate(_config(out))


def test_a_killed_run_resumes_skipping_every_recorded_stage(replicated) -> None:
    _out, recorded, result = replicated
    assert set(BEFORE_ROUND1) <= recorded
    skipped = {o.name for o in result.outcomes if o.skipped}
    ran = {o.name for o in result.outcomes if not o.skipped}
    assert skipped == recorded
    assert {"sample1", "prep1", "round1", "eval_round1", "compare", "release"} <= ran
    assert set(BEFORE_ROUND1).isdisjoint(ran)


def test_stages_use_disjoint_prompts_the_teacher_and_round_zeros_own_samples(replicated) -> None:
    out, _recorded, _result = replicated
    ids = {
        which: [json.loads(line)["id"] for line in (out / "pool" / f"pool_{which}.jsonl").open()]
        for which in ("round0", "fresh")
    }
    assert len(ids["round0"]) == 24 and len(ids["fresh"]) == 6
    assert set(ids["round0"]).isdisjoint(ids["fresh"])  # round 1 samples prompts round 0 never saw
    teacher = SynthProvenance.read(out / "teacher")
    assert teacher.backend == "reference" and teacher.audit_passed
    assert teacher.rows_kept == 24
    samples = SynthProvenance.read(out / "samples1")
    assert samples.backend == "hf" and samples.k == 2 and samples.audit_passed
    assert samples.weights_sha256 == weights_sha256(out / "round0")  # sampled from round 0
    judged = [json.loads(line) for line in (out / "samples1" / "ledger.jsonl").open()]
    assert len(judged) == 12 and {row["prompt_id"] for row in judged} == set(ids["fresh"])
    assert samples.rows_kept == 0  # three steps of training pass nothing
    round1 = TrainingEvidence.read(out / "round1")
    assert round1.recipe is not None and round1.recipe["model"] == str(out / "round0")  # continue
    assert round1.optimizer_steps == 2
    stats = json.loads((out / "data1" / "stats.json").read_text())
    assert {name: src["samples"] for name, src in stats["sources"].items()} == {"teacher": 8}


def test_verdicts_failures_power_and_the_released_card(replicated) -> None:
    out, _recorded, result = replicated
    for name in ("round0_vs_init", "round1_vs_round0"):
        data = json.loads((out / "compare" / f"{name}.json").read_text())
        assert data["n"] == 4
        # Scored with a limit: the guards are missing, so compare may not accept.
        assert data["verdict"].startswith("INCOMPLETE") and data["accepted"] is None
        assert [g["label"] for g in data["guards"]] == ["IF263", "EV4"]  # release/nano/guards.yaml
    assert result.winner == "round0"  # round 1 was not accepted
    for model in ("init", "round0", "round1"):
        failures = json.loads((out / "failures" / f"{model}.json").read_text())
        assert failures["n"] == 4 and failures["limit"] == 4
    power = json.loads((out / "power.json").read_text())
    assert [line.split(" ")[0] for line in power["statements"]] == ["IF-818", "IF-3k"]
    card = (result.release / "README.md").read_text()
    assert "## Replication: the card's method at CPU scale" in card
    for model in ("init", "round0", "round1"):
        assert weights_sha256(out / model)[:16] in card  # each row names the weights it scored
    assert (
        "replication_dose_response.png" in card
        and (result.release / "replication_dose_response.png").is_file()
    )
    assert power["statements"][0] in card.replace("\\*", "*")
    assert "and the checker kept 0; round 1 trained on the mix `teacher:8`: 8 teacher rows." in card


def test_the_released_winner_loads_in_transformers_pipeline(replicated) -> None:
    from transformers import pipeline

    _out, _recorded, result = replicated
    chat = pipeline("text-generation", model=str(result.release))
    reply = chat([{"role": "user", "content": "Say hi."}], max_new_tokens=8, do_sample=False)
    assert reply[0]["generated_text"][-1]["role"] == "assistant"


def test_a_rerun_skips_all_and_redoes_a_stage_whose_output_changed(replicated) -> None:
    out, _recorded, first = replicated
    again = replicate(_config(out))
    assert all(o.skipped for o in again.outcomes)
    assert again.scores == first.scores
    samples = out / "round1" / "eval" / "if818" / "samples_if818.jsonl"
    samples.write_text(samples.read_text() + "\n")  # an edit that keeps it a valid log
    redone = replicate(_config(out))
    ran = {o.name for o in redone.outcomes if not o.skipped}
    assert "eval_round1" in ran
    assert ran.isdisjoint({*BEFORE_ROUND1, "sample1", "prep1", "round1", "eval_round0"})
    assert redone.scores == first.scores


def test_a_budget_the_estimate_exceeds_fails_before_any_stage(tmp_path: Path) -> None:
    with pytest.raises(ExperimentInputError, match=r"--minutes 1: the pending stages need about"):
        replicate(ReplicateConfig("nano", out=tmp_path / "nano", minutes=1))
    assert not (tmp_path / "nano" / "replicate.json").exists()


def test_the_estimate_counts_the_background_evaluations_beside_round_0(tmp_path: Path) -> None:
    from rsi_hub.experiments import replicate_report as report
    from rsi_hub.experiments.replicate import Layout, replication_stages

    parallel = ReplicateConfig("nano", out=tmp_path / "nano")
    serial = ReplicateConfig("nano", out=tmp_path / "nano", background_evals=False)
    stages = replication_stages(parallel, Layout(parallel.out_dir))
    estimate = report.estimate_s(parallel, stages)
    lane = estimate["eval_init"] + estimate["eval_round0"]
    assert report.estimated_wall_s(serial, estimate) == pytest.approx(sum(estimate.values()))
    # The lane (init + round-0 evaluations) outlasts round 0's training: round 0 costs no wall.
    assert lane > estimate["round0"]
    assert report.estimated_wall_s(parallel, estimate) == pytest.approx(
        sum(estimate.values()) - estimate["round0"]
    )
    # The shipped defaults' estimate is within 5 % of their measured 21.4 minutes.
    assert report.estimated_wall_s(parallel, estimate) / 60 == pytest.approx(21.4, rel=0.05)


def test_the_cli_generates_its_options_from_the_config() -> None:
    from rsi_hub.cli import build_parser

    args = build_parser().parse_args(
        ["replicate", "nano", "--out", "x", "--round1-set", "max_steps=5", "--rft-k", "8"]
    )
    from rsi_hub.cli.dataclass_args import dataclass_from_args

    config = dataclass_from_args(ReplicateConfig, args)
    assert (config.round1_set, config.rft_k, config.round1_start) == (
        ("max_steps=5",),
        8,
        "continue",
    )


def test_a_card_is_refused_when_its_replication_names_other_weights(replicated, tmp_path) -> None:
    import shutil

    from rsi_hub.errors import ReleaseError
    from rsi_hub.release import stage_release
    from rsi_hub.rundir import ReplicationReport

    out, _recorded, _result = replicated
    run = shutil.copytree(out / "round0", tmp_path / "round0")
    report = ReplicationReport.read_if_any(run)
    assert report is not None and report.winner == "round0"
    for entry in report.rounds:
        if entry["model"] == "round0":
            entry["weights_sha256"] = weights_sha256(out / "round1")  # another round's scores
    report.write(run)
    with pytest.raises(ReleaseError, match=r"replication.json: its round0 scores were measured"):
        stage_release(run, name="nano", out=tmp_path / "release", log=lambda _line: None)
    assert not (tmp_path / "release").exists()


def test_the_evaluations_ran_in_a_worker_process_beside_training(replicated) -> None:
    out, _recorded, _result = replicated
    ledger = ReplicateLedger.read_if_any(out)
    assert ledger is not None
    # The init's evaluation starts beside round 0's training (round 0's waits for a free lane,
    # or runs in this process when sampling and prep are done first).
    log = (out / ".worker-eval_init.log").read_text()
    assert "if818: wrote" in log  # the worker did the stage's work...
    assert not (out / ".worker-eval_init.json").exists()  # ...and its summary was recorded
    for stage in ("eval_init", "eval_round0"):
        assert ledger.stages[stage]["summary"]["if818"]["if818"]["pass_count"] >= 0


def test_a_worker_stops_when_its_replication_is_killed(replicated, tmp_path: Path) -> None:
    import shutil

    out = tmp_path / "nano"
    shutil.copytree(replicated[0], out)
    parent = f"""
import subprocess, sys, time
worker = subprocess.Popen([sys.executable, "-m", "rsi_hub.experiments.replicate_worker",
                           {str(out)!r}, "eval_init"], stdin=subprocess.PIPE)
print(worker.pid, flush=True)
time.sleep(600)
"""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    process = subprocess.Popen(
        [sys.executable, "-c", parent], stdout=subprocess.PIPE, text=True, env=env
    )
    worker_pid = int(process.stdout.readline())
    time.sleep(1.0)
    process.send_signal(signal.SIGKILL)  # the replication dies mid-stage, as a kill would
    process.wait()
    deadline = time.monotonic() + 2  # importing and loading alone take longer than this
    while time.monotonic() < deadline and Path(f"/proc/{worker_pid}").exists():
        status = Path(f"/proc/{worker_pid}/status").read_text()
        if "State:\tZ" in status:  # exited; only its (dead) parent could reap it
            break
        time.sleep(0.1)
    alive = (
        Path(f"/proc/{worker_pid}").exists()
        and "State:\tZ" not in Path(f"/proc/{worker_pid}/status").read_text()
    )
    assert not alive, "the worker outlived the replication that started it"
    assert not (out / ".worker-eval_init.json").exists()  # it recorded nothing


def test_a_copied_replication_folder_still_verifies(replicated, tmp_path: Path) -> None:
    import shutil

    copy = tmp_path / "elsewhere"
    shutil.copytree(replicated[0], copy)
    again = replicate(_config(copy))  # paths under OUT are fingerprinted relative to it
    assert all(o.skipped for o in again.outcomes), [o.name for o in again.outcomes if not o.skipped]
    assert again.scores == replicated[2].scores
