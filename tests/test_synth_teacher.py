"""The teacher backend: `rsi-hub synth rft --backend reference` on the real generation pool."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rsi_hub.chat import load_system_prompt
from rsi_hub.checker import check
from rsi_hub.cli import main
from rsi_hub.errors import SynthInputError
from rsi_hub.hashing import sha256_file
from rsi_hub.rundir import SynthProvenance
from rsi_hub.suites import responder
from rsi_hub.suites.prompts import load_pool
from rsi_hub.synth.config import SynthConfig


def test_teacher_writes_checker_verified_served_rows(tmp_path: Path) -> None:
    out = tmp_path / "teacher"
    teacher = ["--backend", "reference", "--model", "reference", "--k", "1"]
    code = main(["synth", "rft", *teacher, "--limit", "12", "--out", str(out)])
    assert code == 0
    rows = [json.loads(line) for line in (out / "data.jsonl").read_text().splitlines()]
    pool = {str(p.id): p for p in load_pool()}
    assert len(rows) == 12
    for row in rows:
        prompt = pool[str(row["prompt_id"])]
        system, user, assistant = row["messages"]
        # Served form: k0 as the system message, the pool prompt, the teacher's whole reply.
        assert system == {"role": "system", "content": load_system_prompt()}
        assert user == {"role": "user", "content": prompt.prompt}
        assert assistant["role"] == "assistant"
        assert check(assistant["content"], list(prompt.checks)).passed
    provenance = SynthProvenance.read(out)
    assert provenance.kind == "rft"
    assert provenance.backend == "reference"
    assert provenance.model == "rsi_hub.suites.responder.reference_response"
    assert provenance.weights_sha256 == sha256_file(Path(responder.__file__))
    assert (provenance.rows_kept, provenance.rows_generated) == (12, 12)
    # The real holdout audit ran on the teacher data and found no IF-818/IF263/IF-3k prompt.
    assert provenance.audit_passed
    assert provenance.audit["rows_checked"] == 12
    assert set(provenance.audit["holdouts"]) >= {"if818", "if263", "if3k"}


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"mode": "lensyn"}, "backend"),
        ({"model": "runs/b1"}, "model"),
        ({"k": 4}, "k"),
    ],
)
def test_teacher_refuses_settings_it_cannot_honour(kwargs: dict, field: str) -> None:
    settings = {"mode": "rft", "model": "reference", "out": "O", "k": 1, **kwargs}
    with pytest.raises(SynthInputError) as err:
        SynthConfig(backend="reference", **settings)
    assert err.value.field == field


def test_fixed_filler_teacher_starts_every_answer_on_the_first_clause(tmp_path: Path) -> None:
    from rsi_hub.suites.phrasings import FILLER_CLAUSES

    teacher = ["--backend", "reference", "--model", "reference", "--k", "1", "--limit", "200"]
    pool = {str(p.id): p for p in load_pool()}
    answers = {}
    for filler in ("varied", "fixed"):
        out = tmp_path / filler
        assert main(["synth", "rft", *teacher, "--teacher-filler", filler, "--out", str(out)]) == 0
        rows = [json.loads(line) for line in (out / "data.jsonl").read_text().splitlines()]
        for row in rows:  # both are checker-verified answers to the same prompts
            checks = list(pool[str(row["prompt_id"])].checks)
            assert check(row["messages"][2]["content"], checks).passed
        answers[filler] = {str(r["prompt_id"]): r["messages"][2]["content"] for r in rows}
        assert SynthProvenance.read(out).model == (
            "rsi_hub.suites.responder.reference_response"
            + ("(filler_start=0)" if filler == "fixed" else "")
        )
    assert answers["fixed"].keys() == answers["varied"].keys()
    # A prompt asking only for n sentences: fixed, the answer is the first n clauses, whatever
    # the prompt; varied, it starts where the prompt's hash says.
    only_sent = {
        pid: int(pool[pid].checks[0]["n"])
        for pid in answers["fixed"]
        if [c["type"] for c in pool[pid].checks] == ["sent"]
    }
    assert len(only_sent) >= 10
    for pid, n in only_sent.items():
        assert answers["fixed"][pid] == " ".join(f"{c.capitalize()}." for c in FILLER_CLAUSES[:n])
    assert len({answers["varied"][pid].split()[0] for pid in only_sent}) >= 5


def test_teacher_filler_is_refused_for_a_model_backend() -> None:
    with pytest.raises(SynthInputError) as err:
        SynthConfig(mode="rft", model="runs/b1", out="O", backend="hf", teacher_filler="fixed")
    assert err.value.field == "teacher_filler"
