"""The stage runner of `rsi-hub replicate`: skip what is done and verified, redo the rest.

Each stage declares its settings, the stages it reads and the files it writes. Its fingerprint
is the sha256 of its settings and its inputs' digests (the digest of a stage is the sha256 of
its output files' hashes), so changing one stage's settings redoes it and everything that reads
it. A finished stage is recorded in `OUT/replicate.json` (`ReplicateLedger`) with the sha256 of
every output file; a re-run skips it only when the fingerprint matches and every file still
hashes to the recorded value, so an output deleted, edited or left half-written by a kill is
redone, never trusted for its existence.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rsi_hub.errors import ExperimentError
from rsi_hub.hashing import sha256_files
from rsi_hub.rundir import ReplicateLedger, dumps


@dataclass
class Stage:
    """One stage: what it depends on, what it writes, how to run it.

    Attributes:
        name: the stage's name in the ledger and the summary.
        settings: every value that changes its output (JSON-able).
        inputs: the stages whose outputs it reads.
        outputs: the files it wrote, called after it ran and when verifying.
        run: does the work; returns a small summary (JSON-able) for the ledger and the table.
        clean: the folders to delete before redoing a stale stage (a fresh start).
        input_files: files it reads from a stage that writes more than it needs (round 0's
            prompt file of the split): their sha256 enters the fingerprint instead of that
            stage's digest, so a change to the other files does not redo it.
    """

    name: str
    settings: dict[str, Any]
    inputs: tuple[str, ...]
    outputs: Callable[[], list[Path]]
    run: Callable[[], dict[str, Any]]
    clean: tuple[Path, ...] = ()
    input_files: tuple[Path, ...] = ()


@dataclass
class StageOutcome:
    """How one stage went in this invocation."""

    name: str
    skipped: bool
    wall_s: float
    summary: dict[str, Any] = field(default_factory=dict)


class StageRunner:
    """Runs stages in order against the ledger of `out`, within an optional wall-time budget."""

    def __init__(self, out: Path, *, config: dict[str, Any], budget_s: float | None) -> None:
        self.out = out
        self.budget_s = budget_s
        self.started = time.monotonic()
        self.ledger = ReplicateLedger.read_if_any(out) or ReplicateLedger(stages={})
        self.ledger.config = config
        self.outcomes: list[StageOutcome] = []

    def _digest(self, name: str) -> str:
        record = self.ledger.stages.get(name)
        if record is None:
            raise ExperimentError(f"stage {name} has not run; the stages are out of order.")
        return str(record["digest"])

    def fingerprint(self, stage: Stage) -> str:
        """sha256 of the stage's settings and its inputs' digests."""
        inputs = {name: self._digest(name) for name in stage.inputs}
        missing = [p for p in stage.input_files if not p.is_file()]
        if missing:
            raise ExperimentError(f"stage {stage.name} reads {missing[0]}, which is missing.")
        files = {p.name: digest for p, digest in sha256_files(stage.input_files).items()}
        blob = json.dumps(
            {"settings": stage.settings, "inputs": inputs, "files": files}, sort_keys=True
        )
        # Paths under OUT enter as "<OUT>/...": a replication folder copied or moved elsewhere
        # still verifies (to try other round-1 settings on a copy, say).
        for prefix in sorted({str(self.out.resolve()), str(self.out)}, key=len, reverse=True):
            blob = blob.replace(json.dumps(prefix)[1:-1], "<OUT>")
        return hashlib.sha256(blob.encode("utf-8")).hexdigest()

    def _hashes(self, files: list[Path]) -> dict[str, str]:
        missing = [p for p in files if not p.is_file()]
        if missing:
            return {}
        digests = sha256_files(files)
        return {str(p.relative_to(self.out)): digests[p] for p in sorted(files)}

    def verified(self, stage: Stage, fingerprint: str) -> bool:
        """True when the ledger holds this stage with this fingerprint and intact outputs."""
        record = self.ledger.stages.get(stage.name)
        if record is None or record.get("fingerprint") != fingerprint:
            return False
        recorded: dict[str, str] = record.get("outputs") or {}
        files = [self.out / name for name in recorded]
        return bool(recorded) and self._hashes(files) == recorded

    def check_budget(self, next_stage: str) -> None:
        """Stop between stages once the budget is spent (finished stages stay recorded)."""
        if self.budget_s is None:
            return
        elapsed = time.monotonic() - self.started
        if elapsed > self.budget_s:
            raise ExperimentError(
                f"the --minutes budget ({self.budget_s / 60:g} min) is spent after "
                f"{elapsed / 60:.1f} min, before stage {next_stage}; the finished stages are "
                f"recorded in {self.out}: re-run with a larger --minutes to go on from there."
            )

    def _skip(self, stage: Stage, fingerprint: str) -> StageOutcome | None:
        """The outcome of a verified stage (recorded as skipped), or None when it must run."""
        if not self.verified(stage, fingerprint):
            return None
        record = self.ledger.stages[stage.name]
        outcome = StageOutcome(stage.name, True, 0.0, dict(record.get("summary") or {}))
        print(f"[replicate] {stage.name}: done before, outputs verified; skipped", flush=True)
        self.outcomes.append(outcome)
        return outcome

    def _prepare(self, stage: Stage) -> None:
        self.check_budget(stage.name)
        if stage.name in self.ledger.stages:  # stale or tampered: start that stage afresh
            del self.ledger.stages[stage.name]
            self.ledger.write(self.out)
            for folder in stage.clean:
                shutil.rmtree(folder, ignore_errors=True)

    def run(self, stage: Stage) -> StageOutcome:
        """Skip `stage` when verified, else (clean and) run it and record its outputs."""
        fingerprint = self.fingerprint(stage)
        skipped = self._skip(stage, fingerprint)
        if skipped is not None:
            return skipped
        self._prepare(stage)
        print(f"[replicate] {stage.name}: running", flush=True)
        start = time.monotonic()
        summary = stage.run()
        return self._record(stage, fingerprint, summary, time.monotonic() - start)

    def _record(
        self, stage: Stage, fingerprint: str, summary: dict[str, Any], wall: float
    ) -> StageOutcome:
        outputs = self._hashes(stage.outputs())
        if not outputs:
            raise ExperimentError(
                f"stage {stage.name} finished without writing its outputs under {self.out}; "
                "this is a bug: report it with the log above."
            )
        digest = hashlib.sha256(dumps(outputs).encode("utf-8")).hexdigest()
        self.ledger.stages[stage.name] = {
            "fingerprint": fingerprint,
            "outputs": outputs,
            "digest": digest,
            "wall_s": round(wall, 2),
            "summary": summary,
        }
        self.ledger.write(self.out)
        print(f"[replicate] {stage.name}: done in {wall:.1f} s", file=sys.stderr, flush=True)
        outcome = StageOutcome(stage.name, False, wall, summary)
        self.outcomes.append(outcome)
        return outcome

    def recorded_wall(self, name: str) -> float:
        """The wall seconds the stage took when it ran (also when skipped now)."""
        return float((self.ledger.stages.get(name) or {}).get("wall_s") or 0.0)


@dataclass
class _Running:
    stage: Stage
    fingerprint: str
    process: subprocess.Popen


class BackgroundLane:
    """A second lane for stages nothing else waits on (the evaluations): one at a time, each in
    a worker process (`replicate_worker`, one torch thread), while the runner goes on with the
    next stages.

    Only the runner's process writes the ledger: a worker hands back its summary in a file and
    the lane records it through the runner once the worker has finished.
    """

    def __init__(self, runner: StageRunner) -> None:
        self.runner = runner
        self.queue: list[Stage] = []
        self.running: _Running | None = None

    def submit(self, stage: Stage) -> None:
        """Run `stage` in the background now, or once the stage before it has finished."""
        self.queue.append(stage)
        self.poll()

    def poll(self) -> None:
        """Record a finished worker and start the next queued stage (call between stages)."""
        if self.running is not None and self.running.process.poll() is not None:
            self._collect()
        while self.running is None and self.queue:
            self._start(self.queue.pop(0))

    def finish(self) -> None:
        """Run what is still queued in this process while the worker runs, then wait for it."""
        while self.queue:
            stage = self.queue.pop(0)
            self.runner.run(stage)
            self.poll()
        if self.running is not None:
            self.running.process.wait()
            self._collect()

    def abort(self) -> None:
        """Stop the worker (a stage of this process failed): nothing of its stage is recorded."""
        self.queue.clear()
        if self.running is not None:
            self.running.process.kill()
            self.running.process.wait()
            self.running = None

    def _start(self, stage: Stage) -> None:
        from rsi_hub.experiments import replicate_worker as worker

        runner = self.runner
        fingerprint = runner.fingerprint(stage)
        if runner._skip(stage, fingerprint) is not None:
            return
        runner._prepare(stage)
        runner.ledger.write(runner.out)  # the worker reads the configuration from it
        log_file = worker.log_path(runner.out, stage.name)
        worker.summary_path(runner.out, stage.name).unlink(missing_ok=True)
        print(
            f"[replicate] {stage.name}: running in a worker process beside the next stages "
            f"(log: {log_file})",
            flush=True,
        )
        with log_file.open("w", encoding="utf-8") as log:
            process = subprocess.Popen(
                [sys.executable, "-m", worker.__name__, str(runner.out), stage.name],
                stdin=subprocess.PIPE,
                stdout=log,
                stderr=subprocess.STDOUT,
                env={**os.environ, "OMP_NUM_THREADS": "1"},
            )
        self.running = _Running(stage, fingerprint, process)

    def _collect(self) -> None:
        from rsi_hub.experiments import replicate_worker as worker

        running, self.running = self.running, None
        assert running is not None
        if running.process.stdin is not None:
            running.process.stdin.close()
        name = running.stage.name
        summary_file = worker.summary_path(self.runner.out, name)
        if running.process.returncode != 0 or not summary_file.is_file():
            raise ExperimentError(
                f"stage {name} failed in its worker process (exit {running.process.returncode}); "
                f"its log: {worker.log_path(self.runner.out, name)}. Re-run to redo it."
            )
        record = json.loads(summary_file.read_text(encoding="utf-8"))
        summary_file.unlink()
        self.runner._record(running.stage, running.fingerprint, record["summary"], record["wall_s"])


def files_under(folder: Path, *, skip: tuple[str, ...] = ()) -> list[Path]:
    """Every file under `folder` (recursively), except under the sub-folders named in `skip`."""
    if not folder.is_dir():
        return []
    return sorted(
        p
        for p in folder.rglob("*")
        if p.is_file() and not any(part in skip for part in p.relative_to(folder).parts[:-1])
    )
