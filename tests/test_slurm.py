"""Real Slurm jobs on a one-node cluster (scripts/slurm_local.sh): `train --slurm`, a sweep whose
evaluations wait `afterok` on training (one arm forced to fail), and sharded synthesis as an
array job followed by its merge.

Everything is submitted at once (module fixture) so the jobs share the cluster's 2 CPUs, then
the tests read what the jobs left: evidence, sacct, the runs table, the merged data.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from rsi_hub import slurm
from rsi_hub.cli import main
from rsi_hub.rundir import SweepManifest, SynthProvenance, TrainingEvidence
from rsi_hub.synth import SynthConfig, synthesize
from rsi_hub.synth.backends import REFERENCE_MODEL
from tests.conftest import SLURM_SCRIPT, free_port_pair

pytestmark = pytest.mark.slurm
ROOT = Path(__file__).resolve().parents[1]
# A cap for a stuck cluster, not a speed target: on an idle 2-core machine all jobs end in ~1 min.
QUEUE_DRAIN_S = 1200
SHARDS = 3
SYNTH_ARGS = ["rft", "--model", REFERENCE_MODEL, "--backend", "reference", "--k", "1"]
SYNTH_ARGS += ["--limit", "7"]


@dataclass(frozen=True)
class Submitted:
    work: Path
    train_job: str
    array_job: str
    merge_job: str


def _start(args: list[str], cwd: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "rsi_hub", *args], cwd=cwd, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True,
    )  # fmt: skip


def _finish(process: subprocess.Popen[str]) -> str:
    stdout, stderr = process.communicate(timeout=600)
    assert process.returncode == 0, stderr
    return stdout


def _wait_for_empty_queue() -> None:
    deadline = time.monotonic() + QUEUE_DRAIN_S
    while time.monotonic() < deadline:
        queue = subprocess.run(["squeue", "--noheader"], capture_output=True, text=True, check=True)
        if not queue.stdout.strip():
            return
        time.sleep(1)
    raise AssertionError(f"jobs still queued after {QUEUE_DRAIN_S} s:\n{queue.stdout}")


@pytest.fixture(scope="module")
def submitted(slurm_cluster: Path, tmp_path_factory: pytest.TempPathFactory) -> Submitted:
    work = tmp_path_factory.mktemp("slurm_work")
    # The forced failure: the 4-step arm's run directory cannot be created (a file is there),
    # so its training job fails and its evaluation must never run.
    (work / "runs").mkdir()
    (work / "logs").mkdir()
    (work / "runs" / "smoke_max_steps4").write_text("planted: not a run directory\n")
    # The sweep and the single run are submitted side by side (each CLI loads the recipes).
    sweep = _start(
        [
            "sweep", "--recipe", "smoke", "--grid", "max_steps=2,4", "--slurm",
            "--suite", "pref", "--eval-arg=--pref-data", "--eval-arg=pref_demo",
            "--eval-arg=--limit", "--eval-arg=2", "--sweep-dir", "sweeps/smoke",
        ],
        work,
    )  # fmt: skip
    single = _start(
        ["train", "sft", "--recipe", "smoke", "--slurm", "max_steps=2", "name=single"], work
    )
    _finish(sweep)
    printed = _finish(single)
    train_job = re.fullmatch(r"runs/single: Slurm job (\d+) \(log .*\)\n", printed)
    assert train_job, printed
    array_job = slurm.sbatch(
        [f"--array=0-{SHARDS - 1}", f"--chdir={work}", f"--output={work}/logs/%x-%A_%a.out",
         str(ROOT / "launch" / "synth_shards.sbatch"), "syn", *SYNTH_ARGS]
    )  # fmt: skip
    shard_dirs = " ".join(f"syn/shard-{i}" for i in range(SHARDS))
    merge_job = slurm.sbatch(
        [f"--dependency=afterok:{array_job}", f"--chdir={work}", "--job-name=synth-merge",
         f"--output={work}/logs/%x-%j.out",
         "--wrap", f"{sys.executable} -m rsi_hub synth merge {shard_dirs} --out syn/merged"]
    )  # fmt: skip
    _wait_for_empty_queue()
    return Submitted(work, train_job.group(1), array_job, merge_job)


def test_train_slurm_records_the_job_and_its_final_state(
    submitted: Submitted, capsys: pytest.CaptureFixture[str]
) -> None:
    run = submitted.work / "runs" / "single"
    evidence = TrainingEvidence.read(run)
    assert evidence.completed and evidence.optimizer_steps == 2
    # The id of the job that trained it, and the state sacct gave the template's finalize job.
    assert evidence.slurm_job_id == submitted.train_job
    assert (evidence.slurm_state, evidence.slurm["exit_code"]) == ("COMPLETED", "0:0")
    assert slurm.job_state(submitted.train_job) == "COMPLETED"
    assert main(["train", "finalize", str(run)]) == 0
    assert capsys.readouterr().out == f"{run}: Slurm job {submitted.train_job} COMPLETED\n"


def test_sweep_evaluates_only_the_arm_whose_training_succeeded(
    submitted: Submitted, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    work = submitted.work
    manifest = SweepManifest.read(work / "sweeps" / "smoke")
    jobs = {arm.name: arm.extra["jobs"] for arm in manifest.arms}
    ok, bad = jobs["smoke_max_steps2"], jobs["smoke_max_steps4"]
    states = {
        job: record.state for job, record in slurm.sacct([*ok.values(), *bad.values()]).items()
    }
    assert states == {
        ok["train"]: "COMPLETED",
        ok["eval"]: "COMPLETED",
        bad["train"]: "FAILED",
        bad["eval"]: "CANCELLED",  # afterok could never be met: Slurm cancelled it unstarted
    }
    evidence = TrainingEvidence.read(work / "runs" / "smoke_max_steps2")
    assert (evidence.slurm_job_id, evidence.slurm_state) == (ok["train"], "COMPLETED")
    assert (work / "runs" / "smoke_max_steps2" / "eval" / "pref" / "meta.json").is_file()
    assert (work / "runs" / "smoke_max_steps4").is_file()  # nothing was ever written for it

    monkeypatch.chdir(work)  # the manifest's run directories are relative to the sweep's cwd
    assert main(["runs", "runs", "--sweep", "sweeps/smoke", "--suite", "pref"]) == 0
    table = capsys.readouterr().out.splitlines()
    assert table[0].split()[-2:] == ["Slurm", "jobs"]
    rows = {line.split()[0]: line for line in table if line.startswith("smoke_")}
    assert sorted(rows) == ["smoke_max_steps2", "smoke_max_steps4"]
    assert re.search(r"max_steps=2 +\d\.\d{4}\* ", rows["smoke_max_steps2"])  # * : --limit
    assert rows["smoke_max_steps2"].endswith(
        f"train COMPLETED (job {ok['train']}); eval COMPLETED (job {ok['eval']})"
    )
    assert rows["smoke_max_steps4"].split()[1:3] == ["max_steps=4", "—"]
    assert rows["smoke_max_steps4"].endswith(
        f"train FAILED (job {bad['train']}); eval never run: training FAILED, afterok never "
        f"satisfied (DependencyNeverSatisfied; cancelled, job {bad['eval']})"
    )


def test_synth_array_shards_merge_into_the_unsharded_run(
    submitted: Submitted, tmp_path: Path
) -> None:
    syn = submitted.work / "syn"
    assert slurm.job_state(submitted.merge_job) == "COMPLETED"
    unsharded = tmp_path / "full"
    synthesize(SynthConfig(mode="rft", model=REFERENCE_MODEL, out=unsharded, k=1, limit=7,
                           backend="reference"))  # fmt: skip
    for name in ("data.jsonl", "ledger.jsonl", "run.json"):
        assert (syn / "merged" / name).read_bytes() == (unsharded / name).read_bytes(), name
    merged = SynthProvenance.read_file(syn / "merged" / "provenance.json")
    whole = SynthProvenance.read_file(unsharded / "provenance.json")
    assert (merged.prompt_ids, merged.data_sha256) == (whole.prompt_ids, whole.data_sha256)
    assert [m["shard"] for m in merged.extra["merged_from"]] == ["0/3", "1/3", "2/3"]
    slices = [
        SynthProvenance.read_file(syn / f"shard-{i}" / "provenance.json").prompt_ids
        for i in range(SHARDS)
    ]
    assert slices == [whole.prompt_ids[i::SHARDS] for i in range(SHARDS)]


def test_a_daemon_that_cannot_start_is_named_with_its_log(tmp_path: Path) -> None:
    import socket

    port = free_port_pair()
    with socket.socket() as taken:  # slurmctld's port is in use: it cannot bind and exits
        taken.bind(("", port))
        taken.listen()
        env = {**os.environ, "RSI_HUB_SLURM_DIR": str(tmp_path / "s"),
               "RSI_HUB_SLURM_PORT": str(port), "RSI_HUB_SLURM_START_TIMEOUT": "3"}  # fmt: skip
        up = subprocess.run(
            ["bash", str(SLURM_SCRIPT), "up"], env=env, capture_output=True, text=True,
            timeout=120, check=False,
        )  # fmt: skip
    assert up.returncode == 1
    assert (
        "FAILED: slurmctld did not come up within 3s of the start; last lines of its log:"
        in up.stderr
    )
    assert "Address already in use" in up.stderr
    # What it had started (munged) is stopped again.
    status = subprocess.run(["bash", str(SLURM_SCRIPT), "status"], env=env, capture_output=True,
                            text=True, check=False)  # fmt: skip
    assert status.stdout.splitlines() == [
        "munged: stopped",
        "slurmctld: stopped",
        "slurmd: stopped",
    ]
