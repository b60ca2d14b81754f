"""lensyn end to end on the tiny checkpoint: well-formed output and provenance, even with no pass."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rsi_hub.hashing import weights_sha256
from rsi_hub.rundir import SynthProvenance
from rsi_hub.synth import SamplingSettings, synthesize
from rsi_hub.synth.config import SynthConfig
from tests.synth_standins import PROMPTS, clean_audit, every_id

pytestmark = pytest.mark.slow


def _write_prompts(path: Path) -> Path:
    records = [{"id": p.id, "prompt": p.prompt, "checks": list(p.checks)} for p in PROMPTS]
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def test_lensyn_on_tiny_checkpoint(tiny_run: Path, tmp_path: Path) -> None:
    out = tmp_path / "lensyn"
    config = SynthConfig(
        "lensyn",
        tiny_run,
        out,
        k=2,
        limit=2,
        backend="hf",
        max_new_tokens=6,
        seed=1,
        prompts_file=_write_prompts(tmp_path / "prompts.jsonl"),
    )
    provenance = synthesize(
        config,
        eligible=every_id,
        audit=clean_audit,
    )
    assert sorted(p.name for p in out.iterdir()) == [
        "data.jsonl",
        "ledger.jsonl",
        "provenance.json",
        "run.json",
    ]
    stats = provenance.stats
    # A random-init model never prints a marker in 6 tokens; the run still completes cleanly.
    assert stats["generated"] == 4
    assert stats["judged"] + sum(stats["malformed"].values()) == 4
    assert provenance.prompt_ids == ["p1", "p2"]
    assert provenance.weights_sha256 == weights_sha256(tiny_run)
    assert provenance.backend == "hf"
    assert provenance.kind == "lensyn"
    assert provenance.rows_kept == len((out / "data.jsonl").read_text().splitlines())
    assert json.loads((out / "provenance.json").read_text()) == provenance.to_json()


def test_lensyn_cli_on_the_pool(tiny_run: Path, tmp_path: Path, capsys) -> None:
    """`rsi-hub synth lensyn --limit`: the real pool, eligibility rule, checker and audit."""
    from rsi_hub.cli import main

    out = tmp_path / "cli"
    argv = ["synth", "lensyn", "--model", str(tiny_run), "--out", str(out), "--limit", "3"]
    argv += ["--k", "2", "--max-new-tokens", "6", "--batch-size", "6", "--only-checks", "word_eq"]
    assert main(argv) == 0
    assert "samples from 3 prompts" in capsys.readouterr().out
    provenance = SynthProvenance.read(out)
    ids = provenance.prompt_ids
    assert len(ids) == 3
    assert all(isinstance(i, int) and i % 70 != 33 for i in ids)
    assert provenance.audit_passed
    assert set(provenance.audit["holdouts"]) == {"if818", "if263", "if3k"}
    assert provenance.rows_generated == 6
    assert provenance.check_types == ["word_eq"]
    # Running the same command again resumes a finished run: nothing is generated twice.
    assert main(argv) == 0
    ledger = (out / "ledger.jsonl").read_text().splitlines()
    assert len(ledger) == 6


def test_kept_rows_feed_prep(tiny_run: Path, tmp_path: Path) -> None:
    """lensyn output is an `iflensyn` source for `rsi-hub prep` as it stands: nothing dropped."""
    from rsi_hub.data import prep
    from rsi_hub.synth import SynthSpec, run_synthesis
    from tests.synth_standins import PASSING, StandInBackend

    spec = SynthSpec("lensyn", "standin", "0" * 64, "standin", SamplingSettings(), 3)
    run_synthesis(PROMPTS, StandInBackend(), tmp_path / "synth", spec, audit=clean_audit)
    config = prep.PrepConfig(
        "iflensyn:all",
        tmp_path / "prepared",
        tokenizer=str(tiny_run),
        sources={"iflensyn": str(tmp_path / "synth" / "data.jsonl")},
    )
    result = prep.prepare(config)
    assert result.samples == len(PASSING)
    assert "iflensyn" in json.dumps(result.stats)
    assert '"dropped_holdout": 0' in json.dumps(result.stats)


def test_rft_output_preps_with_the_rft_source(tiny_run: Path, tmp_path: Path, monkeypatch) -> None:
    """`rsi-hub synth rft --out data_src/rft` is the `rft` source's default: prep reads it as is."""
    from rsi_hub.data import prep
    from rsi_hub.data.sources import SOURCES
    from rsi_hub.synth import SynthSpec, run_synthesis
    from tests.synth_standins import StandInBackend

    outputs = {
        ("p1", 0): ("deep ocean blue", False),
        ("p1", 1): ("deep blue", False),  # fails word_eq
        ("p2", 0): ("Calm grey water", False),
        ("p2", 1): ("Hazy", False),  # fails both checks
        ("p3", 0): ("HELLO THERE", False),
        ("p3", 1): ("Hello", False),  # fails is_upper
    }
    monkeypatch.chdir(tmp_path)
    out = Path(SOURCES["rft"].local_default).parent  # data_src/rft
    spec = SynthSpec("rft", "standin", "0" * 64, "standin", SamplingSettings(), 2)
    run_synthesis(PROMPTS, StandInBackend(outputs), out, spec, audit=clean_audit)
    assert (out / "data.jsonl").is_file() and (out / "ledger.jsonl").is_file()
    result = prep.prepare(
        prep.PrepConfig("rft:all", tmp_path / "prepared", tokenizer=str(tiny_run))
    )
    assert result.samples == 3
    stats = json.dumps(result.stats)
    assert '"rft"' in stats and '"dropped_holdout": 0' in stats and '"dropped_unusable": 0' in stats
