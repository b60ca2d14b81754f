"""`rsi-hub eval --revise K` (its own protocol), `compare --revise K` and `rsi-hub rescore`, on
real eval folders written by `rsi-hub eval` on the tiny checkpoint."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from rsi_hub.checker import CHECKER_VERSION
from rsi_hub.cli import main
from rsi_hub.errors import EvaluationInputError
from rsi_hub.evaluate import EvalConfig, evaluate_run
from rsi_hub.evaluate.compare import compare_runs
from rsi_hub.evaluate.rescore import rescore_suite
from rsi_hub.rundir import EvalMeta

LIMIT, GEN, ROUNDS = 4, 6, 2


@pytest.fixture(scope="module")
def scored(tiny_run: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A run with a plain served if818 eval and a verify-and-revise one of the same documents."""
    run = tmp_path_factory.mktemp("revise") / "run"
    shutil.copytree(tiny_run, run)
    evaluate_run(EvalConfig(run, "if818", limit=LIMIT, max_gen_toks=GEN, batch_size=LIMIT))
    evaluate_run(EvalConfig(run, "if818", limit=LIMIT, max_gen_toks=GEN, revise=ROUNDS))
    return run


def _rows(folder: Path) -> list[dict]:
    return [json.loads(line) for line in (folder / "samples_if818.jsonl").open()]


def test_revise_is_scored_as_its_own_protocol(scored: Path) -> None:
    plain, revised = scored / "eval" / "if818", scored / "eval" / f"if818.revise-{ROUNDS}"
    meta = EvalMeta.read(revised)
    assert meta.served_configuration is False
    assert meta.extra["protocol"] == "verify-and-revise" and meta.extra["max_rounds"] == ROUNDS
    assert meta.generation["max_rounds"] == ROUNDS
    assert meta.weights_sha256 == EvalMeta.read(plain).weights_sha256
    plain_rows, revise_rows = _rows(plain), _rows(revised)
    # The same documents and rendered prompts as plain serving, and round one IS plain serving.
    assert [r["doc_hash"] for r in revise_rows] == [r["doc_hash"] for r in plain_rows]
    assert [r["prompt_hash"] for r in revise_rows] == [r["prompt_hash"] for r in plain_rows]
    assert [r["revise"]["rounds"][0]["answer"] for r in revise_rows] == [
        r["filtered_resps"][0] for r in plain_rows
    ]
    assert [r["first_acc"] for r in revise_rows] == [r["acc"] for r in plain_rows]
    for row in revise_rows:
        best = row["revise"]["rounds"][row["revise"]["best_index"]]
        assert row["filtered_resps"] == [best["answer"]]
        assert row["acc"] == float(best["verdict"]["passed"])
        assert len(row["revise"]["rounds"]) == (1 if row["first_acc"] else ROUNDS)
    tokens = meta.extra["tokens"]
    assert tokens["plain"]["completion"] == sum(
        r["revise"]["rounds"][0]["completion_tokens"] for r in revise_rows
    )
    assert tokens["revise"]["completion"] == sum(r["completion_tokens"] for r in revise_rows)
    assert tokens["per_prompt"]["revise_completion"] == tokens["revise"]["completion"] / LIMIT


def test_compare_pairs_revise_with_plain_serving_and_says_the_protocols_differ(
    scored: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    plain_rows = _rows(scored / "eval" / "if818")
    revise_rows = _rows(scored / "eval" / f"if818.revise-{ROUNDS}")
    c = compare_runs(scored, scored, revise_b=ROUNDS, bootstrap_iters=200)
    assert (c.n, c.prompts_differ, c.unmatched_a, c.unmatched_b) == (LIMIT, 0, 0, 0)
    assert c.a == sum(r["acc"] for r in plain_rows) and c.b == sum(r["acc"] for r in revise_rows)
    assert c.accepted is None and c.guards == []
    assert c.protocols_differ.startswith("A is plain serving (one greedy answer); B is verify-")
    assert c.verdict.startswith("PROTOCOLS DIFFER: verify-and-revise ")
    assert main(["compare", str(scored), "--revise", str(ROUNDS), "--bootstrap-iters", "200"]) == 0
    captured = capsys.readouterr()
    assert captured.out.startswith("protocols differ: A is plain serving")
    assert "this is not a model comparison" in captured.err
    assert main(["compare", str(scored), "--revise", "5"]) == 2
    assert f"run `rsi-hub eval {scored} --suite if818 --revise 5` first" in capsys.readouterr().err


def test_revise_options_are_checked_before_anything_loads(tmp_path: Path) -> None:
    with pytest.raises(EvaluationInputError, match="--revise must be at least 1"):
        EvalConfig(tmp_path, "if818", revise=0)
    with pytest.raises(EvaluationInputError, match=r"one checked instruction-following suite"):
        EvalConfig(tmp_path, "ev4", revise=2)
    with pytest.raises(EvaluationInputError, match="backend hf"):
        EvalConfig(tmp_path, "if818", revise=2, backend="vllm")


def test_rescore_rejudges_logged_answers_with_the_current_checker(
    scored: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = tmp_path / "run"
    shutil.copytree(scored, run)
    folder = run / "eval" / "if818"
    original_rows = _rows(folder)
    original_results = json.loads((folder / "results.json").read_text())["results"]
    # Plant what an older checker said: document 1 (one word_max check) flipped, and its totals.
    planted = [dict(r) for r in original_rows]
    row = planted[1]
    assert row["doc"]["checks"] == [{"type": "word_max", "n": 70}]
    old_pass = not row["acc"]
    row.update(acc=float(old_pass), pass_count=float(old_pass), miss_word_max=float(not old_pass))
    with (folder / "samples_if818.jsonl").open("w") as out:
        out.writelines(json.dumps(r) + "\n" for r in planted)
    results = json.loads((folder / "results.json").read_text())
    count = sum(r["pass_count"] for r in planted)
    results["results"]["if818"].update({"pass_count,none": count, "acc,none": count / LIMIT})
    (folder / "results.json").write_text(json.dumps(results))
    meta = json.loads((folder / "meta.json").read_text())
    meta["checker_version"] = "1.0"
    (folder / "meta.json").write_text(json.dumps(meta))
    planted_files = {p.name: p.read_bytes() for p in folder.iterdir()}

    assert main(["rescore", str(run), "--suite", "if818"]) == 0
    out = capsys.readouterr().out
    way = "0 fail -> pass, 1 pass -> fail" if old_pass else "1 fail -> pass, 0 pass -> fail"
    assert f"  word_max: {way}\n" in out and f"  prompts: {way}\n" in out
    assert f"re-judged with checker {CHECKER_VERSION} (was 1.0); 1 check verdict(s) flipped" in out
    # The new folder is what the current checker says: exactly lm-eval's original numbers.
    assert _rows(folder) == original_rows
    assert json.loads((folder / "results.json").read_text())["results"] == original_results
    new_meta = EvalMeta.read(folder)
    assert new_meta.checker_version == CHECKER_VERSION
    assert new_meta.weights_sha256 == meta["weights_sha256"]
    assert new_meta.extra["rescored_from"]["checker_version"] == "1.0"
    kept = run / "eval" / ".superseded" / "if818.checker-1.0"
    assert {p.name: p.read_bytes() for p in kept.iterdir()} == planted_files
    # A revise folder's requests came from the checker that judged it: it is not rescored.
    with pytest.raises(EvaluationInputError, match="cannot be rescored"):
        rescore_suite(run, f"if818.revise-{ROUNDS}")
