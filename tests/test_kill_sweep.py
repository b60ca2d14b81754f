"""Every writer, SIGKILLed at each of its steps in turn, loses nothing and leaves old or new.

Writers call `rsi_hub.crashpoint.crash_point()` after every write, fsync, rename and delete.
For N = 1, 2, ... a real process (forked by `tests/kill_driver.py`) runs the writer with
`RSI_HUB_KILL_AT=N` and dies of SIGKILL at its N-th step, until an N past the last step lets it
finish: every step is a kill site, deterministically. After each kill the test checks the disk
(append-only files: nothing vouched for is missing, nothing twice; folders: the old output or
the new one, never neither), then re-runs the writer and checks that the result is complete.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from rsi_hub.crashpoint import KILL_AT_ENV
from rsi_hub.staging import aside_dir, recover_swap
from tests.synth_standins import PASSING, PROMPTS

MAX_STEPS = 300  # far more than any writer here takes; stops a sweep that could never end
ALL_KEYS = sorted((p.id, s) for p in PROMPTS for s in range(3))


class Driver:
    """A `tests.kill_driver` process serving one writer."""

    def __init__(self, writer: str, work: Path, *extra: Path) -> None:
        env = {k: v for k, v in os.environ.items() if k != KILL_AT_ENV}
        env["PYTHONPATH"] = os.pathsep.join([str(Path.cwd()), *sys.path])
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "tests.kill_driver", writer, str(work), *map(str, extra)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env=env,
        )
        assert self._answer() == "ready"

    def _answer(self) -> str:
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        assert line, f"the kill driver died (exit {self.proc.poll()}); see its stderr above"
        return line.strip()

    def run(self, variant: str, kill_at: int = 0) -> str:
        """Run the writer once: `killed`, `exit 0` or `exit 1`."""
        assert self.proc.stdin is not None
        self.proc.stdin.write(f"{variant} {kill_at}\n")
        self.proc.stdin.flush()
        return self._answer()

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait(timeout=60)


def _snapshot(folder: Path) -> dict[str, str]:
    """Every file under `folder` (relative path -> sha256 of its bytes)."""
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def _leftovers(target: Path) -> list[str]:
    return sorted(p.name for p in target.parent.glob(f".{target.name}.*"))


def _sweep_folder_writer(driver: Driver, target: Path, work: Path) -> None:
    """Kill a folder writer replacing `old` by `new` at every step; check old-or-new each time."""
    assert driver.run("old") == "exit 0"
    old = _snapshot(target)
    pristine = work / "pristine-old"
    shutil.copytree(target, pristine)
    assert driver.run("new") == "exit 0"
    new = _snapshot(target)
    assert old != new and old and new
    outcomes = []
    for step in range(1, MAX_STEPS):
        shutil.rmtree(target)
        for name in _leftovers(target):
            shutil.rmtree(target.parent / name)
        shutil.copytree(pristine, target)
        status = driver.run("new", step)
        if status == "exit 0":
            break
        assert status == "killed", f"step {step}: the writer failed ({status})"
        assert target.exists() or aside_dir(target).exists(), f"step {step}: neither output"
        recover_swap(target)  # what the next start does first
        found = _snapshot(target)
        assert found in (old, new), f"step {step}: a mix of old and new output"
        outcomes.append("old" if found == old else "new")
        assert driver.run("new") == "exit 0", f"step {step}: the re-run failed"
        assert _snapshot(target) == new, f"step {step}: the re-run's output differs"
        assert _leftovers(target) == [], f"step {step}: hidden folders left behind"
    else:
        pytest.fail(f"the writer was still running after {MAX_STEPS} steps")
    # Kills came both before the swap (old output kept) and after it (new output in place).
    assert outcomes.count("old") >= 3 and outcomes.count("new") >= 1, outcomes


def _complete_lines(path: Path) -> list[str]:
    """The whole lines of a JSONL file a kill left (a torn last line is not one)."""
    if not path.exists():
        return []
    return path.read_text(encoding="utf-8").split("\n")[:-1]


def _keys(lines: list[str]) -> list[tuple[str, int]]:
    return [(r["prompt_id"], r["sample"]) for r in map(json.loads, lines)]


def test_synth_killed_at_every_step_resumes_without_loss_or_duplicates(tmp_path: Path) -> None:
    out = tmp_path / "out"
    driver = Driver("synth", tmp_path)
    try:
        for step in range(1, MAX_STEPS):
            shutil.rmtree(out, ignore_errors=True)
            status = driver.run("new", step)
            if status == "exit 0":
                break
            assert status == "killed", f"step {step}: the run failed ({status})"
            data = _complete_lines(out / "data.jsonl")
            ledger = [json.loads(line) for line in _complete_lines(out / "ledger.jsonl")]
            kept = {(e["prompt_id"], e["sample"]) for e in ledger if e["status"] == "kept"}
            assert kept <= set(_keys(data)), f"step {step}: the ledger vouches for a lost row"
            assert max(Counter(_keys(data)).values(), default=1) == 1, f"step {step}"

            assert driver.run("new") == "exit 0", f"step {step}: the resume failed"
            final_data = _complete_lines(out / "data.jsonl")
            assert sorted(_keys(final_data)) == sorted(PASSING), f"step {step}"
            assert set(data) <= set(final_data), f"step {step}: a kept row was rewritten"
            final_ledger = _keys(_complete_lines(out / "ledger.jsonl"))
            assert sorted(final_ledger) == ALL_KEYS, f"step {step}: lost or doubled samples"
            provenance = json.loads((out / "provenance.json").read_text(encoding="utf-8"))
            assert (provenance["rows_generated"], provenance["rows_kept"]) == (9, 3)
        else:
            pytest.fail(f"the run was still going after {MAX_STEPS} steps")
    finally:
        driver.close()
    assert step > 30  # every batch's row, fsync and ledger steps were kill sites


def test_prep_killed_at_every_step_leaves_old_or_new(tiny_run: Path, tmp_path: Path) -> None:
    driver = Driver("prep", tmp_path, tiny_run)
    try:
        _sweep_folder_writer(driver, tmp_path / "out", tmp_path)
    finally:
        driver.close()


def test_eval_store_killed_at_every_step_leaves_old_or_new(tmp_path: Path) -> None:
    driver = Driver("eval", tmp_path)
    try:
        _sweep_folder_writer(driver, tmp_path / "run" / "eval" / "if818", tmp_path)
    finally:
        driver.close()


def test_soup_killed_at_every_step_leaves_old_or_new(tiny_run: Path, tmp_path: Path) -> None:
    driver = Driver("soup", tmp_path, tiny_run)
    try:
        _sweep_folder_writer(driver, tmp_path / "out", tmp_path)
    finally:
        driver.close()
