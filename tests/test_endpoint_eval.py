"""`rsi-hub eval --endpoint` against a real `rsi-hub serve` process, and its bad inputs.

The same documents are scored in process (hf backend, batch 1, one thread like the server) and
through the session's server on the tiny model made to stop: the answers and the checker's
per-document verdicts must be equal.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import torch

from rsi_hub.cli import main
from rsi_hub.errors import EvaluationInputError
from rsi_hub.evaluate import evaluate_run, read_suite_dir, weights_sha256
from rsi_hub.evaluate.config import EvalConfig
from tests.serving_server import free_port

pytestmark = pytest.mark.slow

LIMIT = 6
GEN = 8


def _samples(run: Path, suite: str) -> list[dict]:
    return sorted((s for _, s in read_suite_dir(run, suite).samples()), key=lambda s: s["doc_id"])


@pytest.fixture(scope="module")
def both(stopping_run: Path, stopping_server, tmp_path_factory: pytest.TempPathFactory):
    """(hf-scored copy, endpoint-scored copy) of the served run, on if818 and if263."""
    base = tmp_path_factory.mktemp("endpoint_eval")
    hf_run, endpoint_run = base / "hf", base / "endpoint"
    shutil.copytree(stopping_run, hf_run)
    shutil.copytree(stopping_run, endpoint_run)
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        evaluate_run(EvalConfig(hf_run, "if818,if263", limit=LIMIT, max_gen_toks=GEN, batch_size=1))
    finally:
        torch.set_num_threads(threads)
    evaluate_run(
        EvalConfig(
            endpoint_run,
            "if818,if263",
            limit=LIMIT,
            max_gen_toks=GEN,
            endpoint=stopping_server.base_url,
        )
    )
    return hf_run, endpoint_run


@pytest.mark.parametrize("suite", ["if818", "if263"])
def test_endpoint_verdicts_equal_the_hf_backends(both, suite: str) -> None:
    hf_run, endpoint_run = both
    hf, served = _samples(hf_run, suite), _samples(endpoint_run, suite)
    assert [s["doc_id"] for s in served] == [s["doc_id"] for s in hf] == list(range(LIMIT))
    for a, b in zip(hf, served, strict=True):
        assert b["filtered_resps"] == a["filtered_resps"]
        assert (b["acc"], b["pass_count"]) == (a["acc"], a["pass_count"])
        misses = {k for k in a if k.startswith("miss_")}
        assert {k: b[k] for k in misses} == {k: a[k] for k in misses}
    assert read_suite_dir(endpoint_run, suite).metrics(suite) == read_suite_dir(
        hf_run, suite
    ).metrics(suite)


def test_endpoint_meta_names_the_server_and_the_served_weights(both, stopping_server) -> None:
    _, endpoint_run = both
    meta = read_suite_dir(endpoint_run, "if263").meta
    assert meta.backend == "endpoint"
    assert meta.extra["endpoint"] == {
        "url": stopping_server.base_url,
        "model_id": stopping_server.model_id,
        "serves_run": True,
    }
    assert meta.weights_sha256 == weights_sha256(endpoint_run)
    assert meta.system_prompt_id is None
    assert meta.extra["model_args"]["chat_template_args"] == {"use_default_system_prompt": False}


def test_a_results_folder_gets_no_weights_hash(stopping_server, tmp_path: Path) -> None:
    out = tmp_path / "results"
    out.mkdir()
    evaluate_run(
        EvalConfig(out, "if818", limit=1, max_gen_toks=2, endpoint=stopping_server.base_url)
    )
    meta = read_suite_dir(out, "if818").meta
    assert meta.weights_sha256 is None and meta.extra["weights_files"] == {}
    assert meta.extra["endpoint"]["serves_run"] is False


def test_dead_endpoint_is_one_clear_line(tmp_path: Path, capsys) -> None:
    url = f"http://127.0.0.1:{free_port()}/v1"
    assert main(["eval", str(tmp_path), "--endpoint", url, "--limit", "1"]) == 2
    err = capsys.readouterr().err.strip()
    assert err == (
        f"rsi-hub eval: error: --endpoint {url}: no server answers ([Errno 111] Connection "
        "refused); start one with `rsi-hub serve RUN --port N` or check the URL."
    )


def test_wrong_model_id_is_one_clear_line(stopping_server, tmp_path: Path, capsys) -> None:
    argv = ["eval", str(tmp_path), "--endpoint", stopping_server.base_url, "--limit", "1"]
    assert main([*argv, "--endpoint-model", "RSIArena/other"]) == 2
    err = capsys.readouterr().err.strip()
    assert err == (
        "rsi-hub eval: error: --endpoint-model 'RSIArena/other': "
        f"{stopping_server.base_url} does not serve it; it serves {stopping_server.model_id} "
        "(pass one of those, or omit --endpoint-model)."
    )


def test_loglikelihood_suites_and_ev4_without_the_run_are_refused(tmp_path: Path) -> None:
    url = "http://127.0.0.1:9/v1"  # refused before any request
    with pytest.raises(EvaluationInputError, match=r"generation suites only; pref need"):
        evaluate_run(EvalConfig(tmp_path, "if818,pref", endpoint=url))
    with pytest.raises(EvaluationInputError, match=r"ev4 counts answer tokens"):
        evaluate_run(EvalConfig(tmp_path, "ev4", endpoint=url))
    with pytest.raises(EvaluationInputError, match=r"leave out --backend vllm"):
        EvalConfig(tmp_path, endpoint=url, backend="vllm")
    with pytest.raises(EvaluationInputError, match=r"--endpoint-model needs --endpoint"):
        EvalConfig(tmp_path, endpoint_model="x")
