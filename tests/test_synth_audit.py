"""The contamination audit of synthetic data uses the suites' holdout index and blocks leaks."""

from __future__ import annotations

from pathlib import Path

import pytest

from rsi_hub.suites import holdout
from rsi_hub.synth import (
    ContaminationError,
    PoolPrompt,
    SamplingSettings,
    SynthSpec,
    run_synthesis,
)
from rsi_hub.synth.pool import audit_data
from tests.synth_standins import PROMPTS, StandInBackend, clean_audit

SPEC = SynthSpec("lensyn", "standin", "0" * 64, "standin", SamplingSettings(), 3)


@pytest.fixture
def data(tmp_path: Path) -> Path:
    run_synthesis(PROMPTS, StandInBackend(), tmp_path, SPEC, audit=clean_audit)
    return tmp_path / "data.jsonl"


def test_clean_data_passes(data: Path) -> None:
    index = holdout.HoldoutIndex([("if818-0001", "Write a limerick about a lighthouse keeper.")])
    report = audit_data(data, indexes={"if818": index})
    assert report["passed"] is True
    assert report["rows_checked"] == 3
    assert report["holdouts"]["if818"] == {"compared": 3, "exact": 0, "near": 0, "examples": []}


def test_holdout_prompt_is_caught(data: Path) -> None:
    # p1's prompt with other case and punctuation is a held-out prompt: caught as a copy.
    index = holdout.HoldoutIndex([("if3k-0042", "NAME a colour, in exactly three words!")])
    clean = holdout.HoldoutIndex([("if818-0001", "Write a limerick about a lighthouse keeper.")])
    report = audit_data(data, indexes={"if818": clean, "if3k": index})
    assert report["passed"] is False
    assert report["holdouts"]["if3k"]["exact"] == 1
    assert report["holdouts"]["if3k"]["examples"] == [["p1", "if3k-0042", 1.0]]
    assert report["holdouts"]["if818"]["exact"] + report["holdouts"]["if818"]["near"] == 0


def test_near_duplicate_is_caught(tmp_path: Path) -> None:
    long = "Write a short story about a lighthouse keeper who finds a message in a bottle."
    edited = PoolPrompt("p9", long.replace("short", "brief"), ({"type": "word_max", "n": 50},))
    outputs = {("p9", 0): ("FINAL: A keeper found a bottle.", False)}
    spec = SynthSpec("lensyn", "standin", "0" * 64, "standin", SamplingSettings(), 1)
    run_synthesis([edited], StandInBackend(outputs), tmp_path, spec, audit=clean_audit)
    index = holdout.HoldoutIndex([("if263-0003", long)])
    report = audit_data(tmp_path / "data.jsonl", indexes={"if263": index})
    assert (report["passed"], report["holdouts"]["if263"]["near"]) == (False, 1)


def test_real_holdouts_are_audited(data: Path) -> None:
    report = audit_data(data)  # the committed IF-818, IF263 and IF-3k suites
    assert set(report["holdouts"]) == {"if818", "if263", "if3k"}
    assert report["passed"] is True


def test_synthesize_refuses_contaminated_output(tiny_run: Path, tmp_path: Path) -> None:
    from rsi_hub.synth import synthesize
    from rsi_hub.synth.config import SynthConfig

    index = holdout.HoldoutIndex([("if263-0007", PROMPTS[0].prompt)])
    out = tmp_path / "run"
    with pytest.raises(ContaminationError):
        synthesize(
            SynthConfig("lensyn", tiny_run, out, k=3, prompts_file=_prompt_file(tmp_path)),
            generator=StandInBackend(),
            eligible=lambda _id: True,
            audit=lambda path: audit_data(path, indexes={"if263": index}),
        )
    # The report is still written, so the leak can be read and fixed.
    assert '"passed": false' in (out / "provenance.json").read_text()


def _prompt_file(tmp_path: Path) -> Path:
    import json

    path = tmp_path / "prompts.jsonl"
    path.write_text(
        "".join(
            json.dumps({"id": p.id, "prompt": p.prompt, "checks": list(p.checks)}) + "\n"
            for p in PROMPTS
        )
    )
    return path
