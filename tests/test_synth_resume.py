"""An interrupted run resumes without duplicating or losing samples."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rsi_hub.errors import RsiHubError
from rsi_hub.synth import SamplingSettings, SynthSpec, run_synthesis
from tests.synth_standins import PASSING, PROMPTS, StandInBackend, clean_audit

SPEC = SynthSpec(
    mode="lensyn",
    model="standin",
    weights_sha256="0" * 64,
    backend="standin",
    sampling=SamplingSettings(max_new_tokens=16),
    k=3,
)
ALL_KEYS = {(p.id, s) for p in PROMPTS for s in range(3)}


def _lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def _keys(records: list[dict]) -> list[tuple[str, int]]:
    return [(r["prompt_id"], r["sample"]) for r in records]


def test_interrupted_run_resumes_exactly(tmp_path: Path) -> None:
    # Interrupt deliberately on the third backend call (batches of 2: 4 samples are done).
    first = StandInBackend(interrupt_on_call=3)
    with pytest.raises(KeyboardInterrupt):
        run_synthesis(PROMPTS, first, tmp_path, SPEC, audit=clean_audit, batch_size=2)
    assert not (tmp_path / "provenance.json").exists()
    done_before = set(_keys(_lines(tmp_path / "ledger.jsonl")))
    assert len(done_before) == 4

    second = StandInBackend()
    provenance = run_synthesis(PROMPTS, second, tmp_path, SPEC, audit=clean_audit, batch_size=2)
    # The resumed run asked only for what was missing, each once.
    assert set(second.requested) == ALL_KEYS - done_before
    assert len(second.requested) == len(set(second.requested))
    ledger_keys = _keys(_lines(tmp_path / "ledger.jsonl"))
    assert sorted(ledger_keys) == sorted(ALL_KEYS)  # no duplicates, no losses
    data_keys = _keys(_lines(tmp_path / "data.jsonl"))
    assert sorted(data_keys) == sorted(PASSING)
    assert (provenance.rows_generated, provenance.rows_kept) == (9, 3)

    # Running again over a complete run generates nothing and changes nothing.
    data_before = (tmp_path / "data.jsonl").read_bytes()
    third = StandInBackend()
    again = run_synthesis(PROMPTS, third, tmp_path, SPEC, audit=clean_audit)
    assert third.requested == []
    assert (tmp_path / "data.jsonl").read_bytes() == data_before
    assert again.data_sha256 == provenance.data_sha256


def test_torn_writes_are_repaired(tmp_path: Path) -> None:
    run_synthesis(PROMPTS, StandInBackend(), tmp_path, SPEC, audit=clean_audit)
    reference = sorted(_keys(_lines(tmp_path / "data.jsonl")))
    ledger = tmp_path / "ledger.jsonl"
    lines = ledger.read_text().splitlines(keepends=True)
    # Simulate a crash: the ledger lost the line of a kept sample (p3, 1) and the last line
    # was torn mid-write.
    kept_line = next(i for i, line in enumerate(lines) if '"p3", "sample": 1' in line)
    lost = lines.pop(kept_line)
    ledger.write_text("".join(lines[:-1]) + lines[-1][:10])
    second = StandInBackend()
    run_synthesis(PROMPTS, second, tmp_path, SPEC, audit=clean_audit)
    # The torn sample is generated again; the kept one is re-judged from its row, not redrawn.
    torn = tuple(json.loads(lines[-1]).get(k) for k in ("prompt_id", "sample"))
    assert second.requested == [torn]
    entries = _lines(ledger)
    assert sorted(_keys(entries)) == sorted(ALL_KEYS)
    rebuilt = next(e for e in entries if (e["prompt_id"], e["sample"]) == ("p3", 1))
    assert rebuilt["status"] == json.loads(lost)["status"] == "kept"
    assert sorted(_keys(_lines(tmp_path / "data.jsonl"))) == reference


def test_resume_refuses_other_settings(tmp_path: Path) -> None:
    run_synthesis(PROMPTS, StandInBackend(), tmp_path, SPEC, audit=clean_audit)
    other = SynthSpec(**{**SPEC.__dict__, "k": 2})
    with pytest.raises(RsiHubError, match="other settings"):
        run_synthesis(PROMPTS, StandInBackend(), tmp_path, other, audit=clean_audit)
    provenance = run_synthesis(
        PROMPTS, StandInBackend(), tmp_path, other, audit=clean_audit, force=True
    )
    assert provenance.rows_generated == 6


KILL_SCRIPT = """
import sys, time
from tests.synth_standins import PROMPTS, StandInBackend, clean_audit
from tests.test_synth_resume import SPEC
from rsi_hub.synth import run_synthesis

class Slow(StandInBackend):
    def generate(self, requests):
        time.sleep(0.2)
        return super().generate(requests)

run_synthesis(PROMPTS, Slow(), sys.argv[1], SPEC, audit=clean_audit, batch_size=1)
"""


def test_killed_process_resumes(tmp_path: Path) -> None:
    """SIGKILL a real run mid-way (no clean-up code runs), then resume it."""
    import os
    import signal
    import subprocess
    import sys
    import time

    out = tmp_path / "run"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(Path.cwd()), *sys.path])}
    proc = subprocess.Popen([sys.executable, "-c", KILL_SCRIPT, str(out)], env=env)
    ledger = out / "ledger.jsonl"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if ledger.exists() and len(ledger.read_text().splitlines()) >= 3:
            break
        if proc.poll() is not None:
            pytest.fail(f"the run ended before it could be killed (exit {proc.returncode})")
        time.sleep(0.05)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    done_before = set(_keys(_lines(ledger)))
    assert 3 <= len(done_before) < 9
    # A kept row already on disk whose ledger line was not is re-judged, not drawn again.
    rows_before = set(_keys(_lines(out / "data.jsonl")))
    resumed = StandInBackend()
    provenance = run_synthesis(PROMPTS, resumed, out, SPEC, audit=clean_audit)
    assert set(resumed.requested) == ALL_KEYS - done_before - rows_before
    assert sorted(_keys(_lines(ledger))) == sorted(ALL_KEYS)
    assert sorted(_keys(_lines(out / "data.jsonl"))) == sorted(PASSING)
    assert provenance.rows_generated == 9


# One prompt, many samples: only the first passes. Its data row is small, while the 59 failing
# samples' ledger lines overflow a write buffer (8 KiB), so a writer that buffers the two files
# independently puts the ledger's "kept" line on disk while the data row is still in memory.
BIG_K = 60
BIG_OUTPUTS = {
    ("p1", s): ("FINAL: deep ocean blue" if s == 0 else "FINAL: deep blue", False)
    for s in range(BIG_K)
}
BIG_SPEC = SynthSpec(**{**SPEC.__dict__, "k": BIG_K})
KILL_MID_BATCH_SCRIPT = """
import os, signal, sys
from rsi_hub.synth import run_synthesis
from rsi_hub.synth.filter import default_judge
from tests.synth_standins import PROMPTS, StandInBackend, clean_audit
from tests.test_synth_resume import BIG_K, BIG_OUTPUTS, BIG_SPEC

check, calls = default_judge(), []

def judge(answer, checks):
    calls.append(answer)
    if len(calls) == BIG_K:  # the last sample of the batch: all others appended, none flushed
        os.kill(os.getpid(), signal.SIGKILL)
    return check(answer, checks)

run_synthesis(PROMPTS[:1], StandInBackend(BIG_OUTPUTS), sys.argv[1], BIG_SPEC,
              audit=clean_audit, batch_size=BIG_K, judge=judge)
"""


def test_kill_mid_batch_loses_no_kept_row(tmp_path: Path) -> None:
    """A kept row reaches the disk before any ledger line that says it is done."""
    import os
    import signal
    import subprocess
    import sys

    out = tmp_path / "run"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(Path.cwd()), *sys.path])}
    proc = subprocess.run([sys.executable, "-c", KILL_MID_BATCH_SCRIPT, str(out)], env=env)
    assert proc.returncode == -signal.SIGKILL
    ledger_kept = [e for e in _lines(out / "ledger.jsonl") if e["status"] == "kept"]
    data_keys = _keys(_lines(out / "data.jsonl")) if (out / "data.jsonl").stat().st_size else []
    assert set(_keys(ledger_kept)) <= set(data_keys)  # the ledger never vouches for a lost row
    resumed = StandInBackend(BIG_OUTPUTS)
    provenance = run_synthesis(PROMPTS[:1], resumed, out, BIG_SPEC, audit=clean_audit)
    assert _keys(_lines(out / "data.jsonl")) == [("p1", 0)]
    assert sorted(_keys(_lines(out / "ledger.jsonl"))) == [("p1", s) for s in range(BIG_K)]
    assert (provenance.rows_generated, provenance.rows_kept) == (BIG_K, 1)
