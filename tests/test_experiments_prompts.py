"""Prompt search: candidate files, Holm correction and the ranked table on constructed logs."""

from __future__ import annotations

import hashlib
import math
import random
from pathlib import Path

import pytest

from rsi_hub.chat import load_system_prompt, templates_dir
from rsi_hub.errors import RsiHubError
from rsi_hub.experiments.prompts import (
    Candidate,
    format_prompt_table,
    load_candidates,
    parse_candidate,
    with_incumbent,
)
from rsi_hub.experiments.stats import holm, wilson_interval

CANDIDATES = Path(__file__).resolve().parents[1] / "templates" / "prompt_candidates"


def test_holm_matches_the_step_down_definition() -> None:
    p = [0.01, 0.04, 0.03, 0.005]
    # Sorted: 0.005*4=0.02, 0.01*3=0.03, 0.03*2=0.06, 0.04*1=0.04 -> raised to 0.06.
    assert holm(p) == pytest.approx([0.03, 0.06, 0.06, 0.02])
    assert holm([0.5, 0.9]) == [1.0, 1.0]
    assert holm([]) == []
    assert holm([0.2]) == [0.2]


def test_wilson_interval() -> None:
    low, high = wilson_interval(562, 818)
    assert low < 562 / 818 < high
    from scipy.stats import binomtest

    expected = binomtest(562, 818).proportion_ci(confidence_level=0.95, method="wilson")
    assert (low, high) == pytest.approx((expected.low, expected.high), rel=1e-9)
    assert wilson_interval(0, 10)[0] == 0.0
    assert wilson_interval(10, 10)[1] == 1.0


def test_shipped_candidates() -> None:
    candidates = {c.id: c for c in load_candidates(CANDIDATES)}
    assert set(candidates) == {"k0", "k0h", "k0i", "k0m", "k0m2", "none"}
    # One copy of k0: the file refers to the served prompt instead of repeating it.
    assert candidates["k0"].text == load_system_prompt()
    assert load_system_prompt() not in (CANDIDATES / "k0.txt").read_text()
    assert candidates["none"].text == ""
    assert candidates["k0h"].intent == "anti over-insertion"
    for cid in ("k0h", "k0i", "k0m", "k0m2"):
        assert candidates[cid].text != load_system_prompt()
        assert "reconstructed" in candidates[cid].source
    assert (templates_dir() / "system_prompt.txt").read_text().strip() == candidates["k0"].text


def test_incumbent_is_first_and_must_be_the_served_k0(tmp_path: Path) -> None:
    ordered = with_incumbent([Candidate("x", "be brief")], "k0")
    assert [c.id for c in ordered] == ["k0", "x"]
    (tmp_path / "k0.txt").write_text("# id: k0\n\nA different text.\n")
    with pytest.raises(RsiHubError, match="differs from the served prompt"):
        with_incumbent([parse_candidate(tmp_path / "k0.txt")], "k0")
    with pytest.raises(RsiHubError, match="not among the candidates"):
        with_incumbent([Candidate("x", "t")], "y")


def _incumbent(n: int, passes: int, seed: int) -> dict[str, bool]:
    flags = [True] * passes + [False] * (n - passes)
    random.Random(seed).shuffle(flags)
    return {f"if818:{i}": flag for i, flag in enumerate(flags)}


def _candidate(
    incumbent: dict[str, bool], inc_only: int, cand_only: int, seed: int
) -> dict[str, bool]:
    """A candidate with exactly `inc_only` items lost and `cand_only` gained vs the incumbent."""
    rng = random.Random(seed)
    lost = rng.sample(sorted(k for k, v in incumbent.items() if v), inc_only)
    gained = rng.sample(sorted(k for k, v in incumbent.items() if not v), cand_only)
    return {k: (not v) if k in lost or k in gained else v for k, v in incumbent.items()}


def _binom_two_sided(k: int, n: int) -> float:
    # Independent oracle: scipy's exact binomial test at p = 1/2.
    from scipy.stats import binomtest

    return binomtest(k, n, 0.5).pvalue


def test_prompt_table_ranks_and_corrects_constructed_logs() -> None:
    from rsi_hub.experiments.prompts import prompt_table

    # The card's shape: k0 at 562/818 and rewrites that lose 45 checks, plus two made-up rows:
    # one slightly better but not significant, one much better.
    discordant = {"k0h": (60, 15), "k0m": (55, 12), "kx": (10, 14), "kbig": (5, 40)}
    outcomes = {"k0": _incumbent(818, 562, seed=0)}
    for seed, (cid, (inc_only, cand_only)) in enumerate(discordant.items()):
        outcomes[cid] = _candidate(outcomes["k0"], inc_only, cand_only, seed)
    raw = {cid: _binom_two_sided(min(a, b), a + b) for cid, (a, b) in discordant.items()}
    ids = sorted(raw)
    expected_holm = dict(zip(ids, holm([raw[c] for c in ids]), strict=True))

    rows = prompt_table(outcomes, "k0", intents={"k0h": "anti over-insertion"})
    by_id = {r.id: r for r in rows}
    assert [r.id for r in rows] == ["k0", "kbig", "kx", "k0m", "k0h"]
    assert [by_id[c].rank for c in ("kbig", "kx", "k0", "k0m", "k0h")] == [1, 2, 3, 4, 5]
    assert by_id["k0"].score == 562 and by_id["k0h"].score == 517 and by_id["kbig"].score == 597
    for cid in discordant:
        assert by_id[cid].p == pytest.approx(raw[cid], rel=1e-9)
        assert by_id[cid].p_holm == pytest.approx(expected_holm[cid], rel=1e-9)
        assert (by_id[cid].incumbent_only, by_id[cid].candidate_only) == discordant[cid]
    assert by_id["k0h"].verdict == "significantly worse"
    assert by_id["kbig"].verdict == "significantly better"
    assert by_id["kx"].verdict == "not significant"
    assert by_id["k0"].verdict == "incumbent" and by_id["k0"].p is None

    text = format_prompt_table(rows)
    assert "k0h (anti over-insertion)" in text and "Holm p (m=4)" in text
    assert "517/818" in text and "-45" in text
    markdown = format_prompt_table(rows, markdown=True)
    assert markdown.splitlines()[1].startswith("|---|")
    assert len(markdown.splitlines()) == 2 + len(rows)


def test_holm_changes_a_verdict() -> None:
    from rsi_hub.experiments.prompts import prompt_table

    # p ~ 0.03 alone is significant; among 3 candidates it is not after correction.
    inc = _incumbent(200, 100, seed=1)
    outcomes = {"k0": inc, "a": _candidate(inc, 20, 8, seed=1)}
    single = prompt_table(outcomes, "k0")
    assert single[1].p < 0.05 and single[1].verdict == "significantly worse"
    outcomes["b"] = dict(inc)
    outcomes["c"] = dict(inc)
    rows = {r.id: r for r in prompt_table(outcomes, "k0")}
    assert rows["a"].p_holm == pytest.approx(min(1.0, 3 * rows["a"].p))
    assert rows["a"].verdict == "not significant"
    assert rows["b"].p == 1.0 and not math.isnan(rows["b"].p_holm)


def test_paired_test_refuses_different_items() -> None:
    from rsi_hub.experiments.prompts import prompt_table

    inc = _incumbent(50, 25, seed=2)
    cand = _candidate(inc, 5, 5, seed=2)
    del cand["if818:7"]
    with pytest.raises(RsiHubError, match="different items"):
        prompt_table({"k0": inc, "a": cand}, "k0")


def _write_logs(run: Path, folder: str, outcomes: dict[str, bool], weights: str) -> None:
    """Constructed `RUN/eval/<folder>/` in evaluate's own layout (its store writes it)."""
    from rsi_hub.evaluate import store
    from rsi_hub.rundir import EvalMeta

    samples = [
        {"doc_id": i, "doc": {"id": key}, "doc_hash": f"h{key}", "acc": float(passed)}
        for i, (key, passed) in enumerate(sorted(outcomes.items()))
    ]
    results = {"results": {"if818": {"pass_count,none": sum(outcomes.values())}}}
    meta = EvalMeta(suite="if818", weights_sha256=weights, system_prompt_id=folder, limit=None)
    store.write_suite_dir(run, folder, results, {"if818": samples}, meta)


def test_search_evaluates_each_candidate_once_and_prints_the_table(tmp_path: Path) -> None:
    import torch
    from safetensors.torch import save_file

    from rsi_hub.experiments.prompts import result_folder, run_prompt_search
    from rsi_hub.hashing import weights_sha256

    run = tmp_path / "run"
    run.mkdir()
    save_file({"w": torch.zeros(3)}, run / "model.safetensors")
    weights = weights_sha256(run)
    inc = {str(k): v for k, v in _incumbent(120, 80, seed=3).items()}
    planned = {"k0": inc, "k0h": _candidate(inc, 25, 2, seed=4), "none": _candidate(inc, 3, 4, 5)}
    calls: list[str] = []

    def evaluator(run_dir: Path, suite: str, candidate: Candidate, folder: str) -> None:
        assert suite == "if818" and folder == result_folder(suite, candidate)
        calls.append(candidate.id)
        _write_logs(run_dir, folder, planned[candidate.id], weights)

    candidates = [c for c in load_candidates(CANDIDATES) if c.id in planned]
    rows = run_prompt_search(run, candidates, evaluator=evaluator)
    assert sorted(calls) == ["k0", "k0h", "none"]
    assert [(r.id, r.score, r.verdict) for r in rows] == [
        ("k0", 80, "incumbent"),
        ("none", 81, "not significant"),
        ("k0h", 57, "significantly worse"),
    ]

    def refuse(*_args: object) -> None:
        raise AssertionError("results for the same weights must be reused")

    again = run_prompt_search(run, candidates, evaluator=refuse)
    assert again == rows
    text = format_prompt_table(rows)
    assert "k0h (anti over-insertion)" in text and "none (no system message)" in text


def test_cli_prints_the_table_from_existing_results(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import shutil

    import torch
    from safetensors.torch import save_file

    from rsi_hub.cli import main
    from rsi_hub.experiments.prompts import result_folder
    from rsi_hub.hashing import weights_sha256

    run = tmp_path / "run"
    run.mkdir()
    save_file({"w": torch.ones(3)}, run / "model.safetensors")
    weights = weights_sha256(run)
    folder = tmp_path / "candidates"
    folder.mkdir()
    inc = _incumbent(100, 70, seed=6)
    planned = {"k0": inc, "k0m": _candidate(inc, 20, 1, seed=7)}
    for cid, outcomes in planned.items():
        shutil.copy(CANDIDATES / f"{cid}.txt", folder)
        candidate = parse_candidate(folder / f"{cid}.txt")
        _write_logs(run, result_folder("if818", candidate), outcomes, weights)
    assert main(["prompt-search", str(run), "--candidates", str(folder), "--markdown"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[2].startswith("| 1 | k0 (the served prompt) | 70/100 | — |")
    assert lines[3].startswith("| 2 | k0m (brevity reworded) | 51/100 | -19 | 20/1 |")
    assert lines[3].endswith("| significantly worse |")


@pytest.mark.slow
def test_prompt_search_end_to_end_on_the_tiny_checkpoint(
    tiny_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Two candidate files and k0 scored by the real runner (`--limit 2`), then the table."""
    import json
    import shutil

    import torch

    from rsi_hub.cli import main
    from rsi_hub.experiments import evalio
    from rsi_hub.hashing import weights_sha256
    from rsi_hub.release.eval_results import read_eval_results

    run = tmp_path / "run"
    shutil.copytree(tiny_run, run)
    folder = tmp_path / "candidates"
    folder.mkdir()
    (folder / "brief.txt").write_text("# intent: short answers\nAnswer briefly.\n")
    (folder / "none.txt").write_text("# intent: no system message\n")
    argv = ["prompt-search", str(run), "--candidates", str(folder), "--limit", "2"]
    # One thread: on shared, busy cores torch's thread pool spins and runs several times slower.
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        assert main([*argv, "--batch-size", "2"]) == 0
    finally:
        torch.set_num_threads(threads)
    table = capsys.readouterr().out
    assert "k0 (the served prompt)" in table and "incumbent" in table
    assert "brief (short answers)" in table and "none (no system message)" in table
    assert all("/2 " in line for line in table.splitlines()[2:])

    expected = {"k0": load_system_prompt(), "brief": "Answer briefly.", "none": None}
    for cid, text in expected.items():
        meta = json.loads((run / "eval" / f"if818.prompt-{cid}" / "meta.json").read_text())
        assert (meta["suite"], meta["system_prompt_id"], meta["limit"]) == ("if818", cid, 2)
        assert meta["served_configuration"] is False
        digest = hashlib.sha256(text.encode()).hexdigest() if text else None
        assert meta["system_prompt_sha256"] == digest
        rows = (run / "eval" / f"if818.prompt-{cid}" / "samples_if818.jsonl").read_text()
        context = json.loads(rows.splitlines()[0])["arguments"][0][0]
        assert context.startswith(
            f"<|im_start|>system\n{text}<|im_end|>" if text else "<|im_start|>user"
        )
    # Never the served configuration: no guard and no release card takes these results.
    assert not (run / "eval" / "if818").exists()
    assert all(g.status == "missing" for g in evalio.guards(run))
    assert read_eval_results(run, weights_sha256(run)) == {}
    # A second search finds every result (same weights, prompt and limit) and evaluates nothing.
    assert main(argv) == 0
    assert capsys.readouterr().out == table


def test_candidate_prompt_arguments_are_checked(tiny_run: Path) -> None:
    from rsi_hub.evaluate import evaluate_run
    from rsi_hub.evaluate.config import EvalConfig

    def fails(match: str, suite: str = "if818", **kwargs: object) -> list[str]:
        lines: list[str] = []
        with pytest.raises(RsiHubError, match=match):
            config = EvalConfig(tiny_run, suite, **kwargs)  # type: ignore[arg-type]
            evaluate_run(config, progress=lines.append)
        return lines

    fails("both its text and its id", system_prompt="x")
    fails("letters, digits", system_prompt="x", system_prompt_id="../k0")
    fails("candidate system prompts only", folder_name="if818.mine")
    fails("must not replace", system_prompt="x", system_prompt_id="x", folder_name="if818")
    fails("one suite", "if818,ev4", system_prompt="x", system_prompt_id="x", folder_name="a")
    # IF263 keeps its no-system protocol under `all`; named, it takes the candidate.
    bad = {"system_prompt": "x", "system_prompt_id": "x", "suite_data": tiny_run / "absent"}
    assert any(line.startswith("if263: left out") for line in fails("no such folder", "all", **bad))
    assert not fails("no such folder", "if818,if263", **bad)
    assert not (tiny_run / "eval").exists()
