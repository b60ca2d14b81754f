"""`rsi-hub suites build | stats | audit`, driven in-process through rsi_hub.cli.main."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rsi_hub.cli import main
from rsi_hub.suites import data_dir
from rsi_hub.suites.mixes import IF818_COUNTS


def test_stats_json_reproduces_card_section_5(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["suites", "stats", "if818", "--json"]) == 0
    stats = json.loads(capsys.readouterr().out)
    assert stats["prompts"] == 818
    # The card's numbers themselves are pinned in test_suites_files.py.
    assert {t: stats["types"][t]["prompts"] for t in IF818_COUNTS} == IF818_COUNTS


def test_stats_table_by_name_and_by_path(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["suites", "stats", "ev4"]) == 0
    out = capsys.readouterr().out
    assert "ev4: 82 prompts, 115 checks, 12 categories" in out and "code_tests" in out
    assert main(["suites", "stats", str(data_dir() / "prompts_if263.jsonl")]) == 0
    assert "263 prompts" in capsys.readouterr().out


def test_stats_unknown_suite_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["suites", "stats", "nope"]) == 2
    assert "no suite named 'nope'" in capsys.readouterr().err


def test_build_writes_then_refuses_to_overwrite_without_force(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from rsi_hub.suites import build

    # Generate once and reuse: this test is about the write rules; test_suites_files checks
    # that a fresh generation gives the committed bytes.
    files = build.suite_files()
    monkeypatch.setattr(build, "suite_files", lambda progress=False: files)
    out = tmp_path / "data"
    assert main(["suites", "build", "--out", str(out)]) == 0
    for path in data_dir().iterdir():
        assert (out / path.name).read_bytes() == path.read_bytes()
    assert main(["suites", "build", "--out", str(out)]) == 0
    assert "unchanged" in capsys.readouterr().out
    (out / "prompts_if818.jsonl").write_text("edited\n")
    assert main(["suites", "build", "--out", str(out)]) == 2
    assert "--force" in capsys.readouterr().err
    assert (out / "prompts_if818.jsonl").read_text() == "edited\n"
    assert main(["suites", "build", "--out", str(out), "--force"]) == 0
    assert "replaced" in capsys.readouterr().out
    assert (out / "prompts_if818.jsonl").read_bytes() == (
        data_dir() / "prompts_if818.jsonl"
    ).read_bytes()


def test_audit_exits_1_on_an_overlap(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from rsi_hub.suites import pool
    from rsi_hub.suites.files import MANIFEST, dumps_rows, load_suite, manifest_bytes

    files = {p.name: p.read_bytes() for p in data_dir().iterdir() if p.name != MANIFEST}
    if263 = load_suite("if263").rows
    if263[5] = {**if263[5], "prompt": load_suite("if818").rows[0]["prompt"] + " Thanks!"}
    files["prompts_if263.jsonl"] = dumps_rows(if263)
    files[MANIFEST] = manifest_bytes(files)
    for name, data in files.items():
        (tmp_path / name).write_bytes(data)
    monkeypatch.setenv("RSI_HUB_SUITES_DIR", str(tmp_path))
    pool.reset_caches()
    try:
        assert main(["suites", "audit", "--pool-size", "200"]) == 1
    finally:
        monkeypatch.undo()
        pool.reset_caches()
    out = capsys.readouterr().out
    assert "if818-0001" in out and "OVERLAPS FOUND" in out
