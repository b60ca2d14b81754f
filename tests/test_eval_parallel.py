"""`rsi-hub eval RUN --num-processes 2`: lm-eval's hf model on 2 gloo CPU processes under
`accelerate launch` scores every document as one process does, and rank 0 alone writes one
`RUN/eval/<suite>/` folder, atomically."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from rsi_hub.cli.dataclass_args import add_dataclass_arguments, dataclass_from_args
from rsi_hub.errors import EvaluationError, EvaluationInputError
from rsi_hub.evaluate import evaluate_run
from rsi_hub.evaluate.config import EvalConfig
from rsi_hub.rundir import eval_dir, eval_root, sample_files

# Generation (if818; ev4 also checks the stop facts gathered from the other rank) and
# log-likelihoods (pref). 5 documents: rank 0 gets 3 requests, rank 1 gets 2.
SUITES = ("if818", "ev4", "pref")
SETTINGS = {"suite": ",".join(SUITES), "limit": 5, "max_gen_toks": 16, "batch_size": 2,
            "pref_data": "pref_demo"}  # fmt: skip
# Sample-log fields that say which document was scored and how it was judged.
DOCUMENT_FIELDS = (
    "doc_id",
    "doc",
    "doc_hash",
    "prompt_hash",
    "target_hash",
    "arguments",
    "metrics",
)
# A log-likelihood is a sum over the answer's tokens; another batch composition (each rank
# batches its own requests) changes its last float32 bits. Relative; measured: 4e-8.
LOGLIKELIHOOD_RTOL = 1e-5


def _samples(run: Path, suite: str) -> list[dict]:
    (path,) = sample_files(eval_dir(run, suite))
    return [json.loads(line) for line in path.read_text().splitlines()]


def _verdicts(row: dict) -> dict:
    return {name: row[name] for name in row["metrics"]}


@pytest.fixture(scope="module")
def runs(tiny_run: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The tiny run scored by one process and (a copy of it) by two."""
    import torch

    base = tmp_path_factory.mktemp("eval_dp")
    one, two = base / "one", base / "two"
    shutil.copytree(tiny_run, one)
    shutil.copytree(tiny_run, two)
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # as each launched rank runs; 2 threads spin on a shared 2-core box
    try:
        evaluate_run(EvalConfig(one, **SETTINGS))
    finally:
        torch.set_num_threads(threads)
    lines: list[str] = []
    outcomes = evaluate_run(EvalConfig(two, num_processes=2, **SETTINGS), progress=lines.append)
    assert [o.suite for o in outcomes] == list(SUITES)
    assert any("--num_processes 2" in line for line in lines)
    return one, two


@pytest.mark.slow
@pytest.mark.parametrize("suite", SUITES)
def test_two_processes_score_every_document_as_one_does(runs, suite: str) -> None:
    one, two = runs
    single, parallel = _samples(one, suite), _samples(two, suite)
    assert [r["doc_id"] for r in parallel] == [r["doc_id"] for r in single] == [0, 1, 2, 3, 4]
    for a, b in zip(single, parallel, strict=True):
        assert {k: a[k] for k in DOCUMENT_FIELDS} == {k: b[k] for k in DOCUMENT_FIELDS}
        assert _verdicts(a) == _verdicts(b), a["doc_id"]
        if suite == "pref":
            for (ll_a, _), (ll_b, _) in zip(a["filtered_resps"], b["filtered_resps"], strict=True):
                assert ll_b == pytest.approx(ll_a, rel=LOGLIKELIHOOD_RTOL)
        else:  # greedy answers: the same text
            assert a["filtered_resps"] == b["filtered_resps"]
    if suite == "ev4":  # every stop fact was read from token ids, on whichever rank generated
        assert [r["stop_exact"] for r in parallel] == [1.0] * 5
    results = [json.loads((eval_dir(run, suite) / "results.json").read_text()) for run in runs]
    assert results[0]["results"] == results[1]["results"]


@pytest.mark.slow
def test_rank_0_writes_one_folder_per_suite_and_records_the_split(runs) -> None:
    one, two = runs
    assert sorted(p.name for p in eval_root(two).iterdir()) == sorted(SUITES)  # no staging left
    for suite in SUITES:
        folder = eval_dir(two, suite)
        assert sorted(p.name for p in folder.iterdir()) == [
            "meta.json", "results.json", f"samples_{suite}.jsonl",
        ]  # fmt: skip
        meta = json.loads((folder / "meta.json").read_text())
        assert meta["weights_sha256"]
        # Each rank ran every other request: 5 generations, or 10 log-likelihoods (2 per pair).
        split = [5, 5] if suite == "pref" else [3, 2]
        assert meta["data_parallel"] == {"num_processes": 2, "requests_per_rank": split}
        single = json.loads((eval_dir(one, suite) / "meta.json").read_text())
        assert single["data_parallel"] == {"num_processes": 1, "requests_per_rank": [sum(split)]}


@pytest.mark.slow
def test_a_failed_launch_leaves_the_previous_folder_as_it_was(runs, monkeypatch) -> None:
    _, two = runs
    folder = eval_dir(two, "if818")
    before = {p.name: p.read_bytes() for p in folder.iterdir()}
    # Rank 0 SIGKILLs itself after its first durable write into the staging folder (the
    # crash-point switch of tests/test_kill_sweep.py); rank 1 never writes, so never dies.
    monkeypatch.setenv("RSI_HUB_KILL_AT", "1")
    with pytest.raises(EvaluationError, match="failed") as failed:
        evaluate_run(EvalConfig(two, num_processes=2, **{**SETTINGS, "suite": "if818"}))
    assert failed.value.field == "num_processes"
    assert {p.name: p.read_bytes() for p in folder.iterdir()} == before
    assert sorted(p.name for p in eval_root(two).iterdir() if not p.name.startswith(".")) == sorted(
        SUITES
    )


def test_each_ranks_answers_go_back_to_their_requests() -> None:
    from rsi_hub.evaluate.models import interleave

    # 7 requests on 3 ranks: rank r ran requests r, r+3, ...; the tiny random model answers
    # every IF prompt with the same text, so the slow tests see an ordering error only in pref.
    shares = [["a0", "a3", "a6"], ["a1", "a4"], ["a2", "a5"]]
    assert interleave(shares, 7) == [f"a{i}" for i in range(7)]
    assert interleave([["a0", "a2"], ["a1"]], 3) == ["a0", "a1", "a2"]
    assert interleave([["a0"], []], 1) == ["a0"]  # fewer requests than ranks


def test_num_processes_is_an_option_of_rsi_hub_eval() -> None:
    import argparse

    parser = argparse.ArgumentParser()
    add_dataclass_arguments(parser, EvalConfig)
    config = dataclass_from_args(EvalConfig, parser.parse_args(["RUN", "--num-processes", "2"]))
    assert config.num_processes == 2
    for bad, field in (({"num_processes": 0}, "num_processes"),
                       ({"num_processes": 2, "backend": "vllm"}, "num_processes"),
                       ({"num_processes": 2, "revise": 2}, "num_processes")):  # fmt: skip
        with pytest.raises(EvaluationInputError) as info:
            EvalConfig("RUN", **bad)
        assert info.value.field == field
