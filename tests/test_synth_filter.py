"""The filter keeps exactly the samples that pass the real checker, in the served row form."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rsi_hub.chat import load_system_prompt
from rsi_hub.synth import SamplingSettings, SynthSpec, load_scaffold, run_synthesis
from tests.synth_standins import PASSING, PROMPTS, StandInBackend, clean_audit


def _spec(mode: str = "lensyn", k: int = 3) -> SynthSpec:
    return SynthSpec(
        mode=mode,
        model="standin",
        weights_sha256="0" * 64,
        backend="standin",
        sampling=SamplingSettings(max_new_tokens=16),
        k=k,
    )


def _rows(out: Path) -> list[dict]:
    return [json.loads(line) for line in (out / "data.jsonl").read_text().splitlines()]


def test_keeps_exactly_the_passing_samples(tmp_path: Path) -> None:
    provenance = run_synthesis(
        PROMPTS, StandInBackend(), tmp_path, _spec(), audit=clean_audit, batch_size=4
    )
    rows = _rows(tmp_path)
    assert {(r["prompt_id"], r["sample"]): r["messages"][-1]["content"] for r in rows} == PASSING
    by_id = {p.id: p for p in PROMPTS}
    for row in rows:
        # Served form: k0, the user prompt, the bare final answer; no scaffold, no draft.
        assert [m["role"] for m in row["messages"]] == ["system", "user", "assistant"]
        assert row["messages"][0]["content"] == load_system_prompt()
        assert row["messages"][1]["content"] == by_id[row["prompt_id"]].prompt
        assert "FINAL" not in row["messages"][2]["content"]
        assert load_scaffold() not in json.dumps(row)
    stats = provenance.stats
    assert (stats["generated"], stats["kept"], stats["judged"]) == (9, 3, 6)
    assert stats["malformed"] == {"no_marker": 1, "empty": 1, "over_long": 1}
    assert stats["prompts_with_a_pass"] == 3
    assert stats["per_check"]["word_eq"] == {"judged": 2, "passed": 1, "pass_rate": 0.5}
    assert stats["per_check"]["no_char"]["judged"] == 2
    assert stats["per_check"]["no_char"]["passed"] == 1  # "Hazy" has a z
    assert stats["per_check"]["is_upper"] == {"judged": 2, "passed": 1, "pass_rate": 0.5}
    ledger = [json.loads(x) for x in (tmp_path / "ledger.jsonl").read_text().splitlines()]
    assert len(ledger) == 9
    failing = next(e for e in ledger if (e["prompt_id"], e["sample"]) == ("p1", 1))
    assert failing["status"] == "rejected"
    assert failing["checks"][0]["reason"]  # the checker's reason is kept for failure analysis


def test_rft_keeps_whole_passing_replies(tmp_path: Path) -> None:
    outputs = {
        ("p1", 0): ("deep ocean blue", False),
        ("p1", 1): ("FINAL: deep blue", False),  # no marker logic in rft: 3 words, passes
        ("p2", 0): ("Zany", False),
        ("p2", 1): ("Calm grey water", False),
        ("p3", 0): ("HELLO", False),
        ("p3", 1): ("", False),
    }
    run_synthesis(PROMPTS, StandInBackend(outputs), tmp_path, _spec("rft", k=2), audit=clean_audit)
    kept = {(r["prompt_id"], r["sample"]): r["messages"][-1]["content"] for r in _rows(tmp_path)}
    assert kept == {
        ("p1", 0): "deep ocean blue",
        ("p1", 1): "FINAL: deep blue",
        ("p2", 1): "Calm grey water",
        ("p3", 0): "HELLO",
    }


def test_provenance_records_the_run(tmp_path: Path) -> None:
    provenance = run_synthesis(PROMPTS, StandInBackend(), tmp_path, _spec(), audit=clean_audit)
    on_disk = json.loads((tmp_path / "provenance.json").read_text())
    assert on_disk["data_sha256"] == provenance.data_sha256
    import hashlib

    assert (
        provenance.data_sha256 == hashlib.sha256((tmp_path / "data.jsonl").read_bytes()).hexdigest()
    )
    assert provenance.prompt_ids == ["p1", "p2", "p3"]
    assert (provenance.rows_kept, provenance.rows_generated) == (3, 9)
    assert provenance.sampling["max_new_tokens"] == 16
    assert provenance.weights_sha256 == "0" * 64
    assert provenance.scaffold_sha256
    assert provenance.audit["passed"] is True


@pytest.mark.parametrize(
    ("checks", "message"),
    [((), "has no checks"), (({"type": "word_eq"},), "prompt 'bad'")],
)
def test_unjudgeable_prompts_are_refused_before_generation(
    tmp_path: Path, checks: tuple, message: str
) -> None:
    from rsi_hub.errors import RsiHubError
    from rsi_hub.synth import PoolPrompt

    backend = StandInBackend()
    bad = PoolPrompt("bad", "Say something.", checks)
    with pytest.raises(RsiHubError, match=message):
        run_synthesis([*PROMPTS, bad], backend, tmp_path, _spec(), audit=clean_audit)
    assert backend.requested == []


def test_provenance_names_the_checker_version(tmp_path: Path) -> None:
    from rsi_hub.checker import CHECKER_VERSION

    provenance = run_synthesis(PROMPTS, StandInBackend(), tmp_path, _spec(), audit=clean_audit)
    assert provenance.checker_version == str(CHECKER_VERSION)
