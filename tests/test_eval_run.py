"""End to end on the tiny checkpoint: `rsi-hub eval` through lm-eval for if818, if263, ev4 and
pref with --limit, the files it writes, and their numbers against independent computations."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch

from rsi_hub.chat import STOP_TOKEN_IDS, load_system_prompt, render
from rsi_hub.checker import CHECKER_VERSION, check, sandbox_backend
from rsi_hub.cli import main
from rsi_hub.errors import RsiHubError
from rsi_hub.evaluate import evaluate_run, read_suite_dir, weights_sha256
from rsi_hub.evaluate.config import EvalConfig
from rsi_hub.evaluate.failures import failure_report
from rsi_hub.evaluate.harness import count_answer_tokens
from rsi_hub.rundir import library_versions

pytestmark = pytest.mark.slow

LIMIT = 3
GEN = 8  # test-only generation limit; the served one (2048) is covered by the CLI test below
REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def scored(tiny_run: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    run = tmp_path_factory.mktemp("scored") / "run"
    shutil.copytree(tiny_run, run)
    # One call, one model load: the k0 / no-system switch happens on the same lm-eval model.
    outcomes = evaluate_run(
        EvalConfig(
            run,
            "if818,if263,ev4,pref",
            limit=LIMIT,
            max_gen_toks=GEN,
            batch_size=2,
            pref_data="pref_demo",
        )
    )
    assert [o.suite for o in outcomes] == ["if818", "if263", "ev4", "pref"]
    return run


def _samples(run: Path, suite: str) -> list[dict]:
    return [s for _, s in read_suite_dir(run, suite).samples()]


def test_layout_and_provenance(scored: Path) -> None:
    for suite in ("if818", "if263", "ev4", "pref"):
        folder = scored / "eval" / suite
        assert sorted(p.name for p in folder.iterdir()) == sorted(
            ["results.json", "meta.json", f"samples_{suite}.jsonl"]
        )
        meta = read_suite_dir(scored, suite).meta
        assert meta.weights_sha256 == weights_sha256(scored)
        assert meta.versions == library_versions()
        assert meta.checker_version == CHECKER_VERSION
        assert meta.sandbox_backend == sandbox_backend() == "bwrap"
        assert meta.system_prompt_id == (None if suite == "if263" else "k0")
        assert meta.limit == LIMIT
        # The test's short generation limit leaves PREF (log-likelihoods only) served.
        assert meta.served_configuration is (suite == "pref")
    meta = read_suite_dir(scored, "if818").meta
    assert meta.generation["until"] == ["<|im_end|>"] and meta.generation["max_gen_toks"] == GEN
    assert len(meta.extra["data"]["sha256"]) == 64
    assert not list((scored / "eval").glob(".*")), "no staging folders left behind"


def test_system_prompt_protocol(scored: Path) -> None:
    for suite, system in (("if818", True), ("if263", False), ("ev4", True)):
        for sample in _samples(scored, suite):
            context = sample["arguments"][0][0]
            assert (load_system_prompt() in context) is system
            assert ("<|im_start|>system" in context) is system
            assert context.endswith("<|im_start|>assistant\n")


def test_if_scores_are_the_checkers(scored: Path) -> None:
    samples = _samples(scored, "if818")
    assert len(samples) == LIMIT
    passes = sum(check(s["filtered_resps"][0], s["doc"]["checks"]).passed for s in samples)
    metrics = read_suite_dir(scored, "if818").metrics("if818")
    assert metrics["pass_count"] == passes and metrics["acc"] == pytest.approx(passes / LIMIT)
    report = failure_report(scored, "if818")
    assert report.analysis.n == LIMIT and report.analysis.passed == passes


def test_ev4_stop_facts_match_a_bare_generate(scored: Path) -> None:
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(scored)
    model = AutoModelForCausalLM.from_pretrained(scored)
    metrics = read_suite_dir(scored, "ev4").metrics("ev4")
    assert metrics["stop_exact"] == 1.0, "rsi-hub eval must read endings from token ids"
    for sample in _samples(scored, "ev4"):
        prompt = render([{"role": "user", "content": sample["doc"]["prompt"]}])
        ids = tokenizer(prompt, return_tensors="pt", add_special_tokens=False).input_ids
        with torch.no_grad():
            out = model.generate(ids, max_new_tokens=GEN, do_sample=False)[0, ids.shape[1] :]
        stops = [i for i, t in enumerate(out.tolist()) if t in STOP_TOKEN_IDS]
        tokens = stops[0] if stops else len(out)
        assert sample["answer_tokens"] == tokens
        assert sample["stop_rate"] == (1.0 if stops else 0.0)
        assert sample["filtered_resps"][0] == tokenizer.decode(
            out[:tokens], skip_special_tokens=True
        )
    assert metrics["checks_total"] == sum(len(s["doc"]["checks"]) for s in _samples(scored, "ev4"))


def test_pref_acc_norm_is_per_token_log_probability(scored: Path) -> None:
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(scored)
    model = AutoModelForCausalLM.from_pretrained(scored)

    def logprob(context: str, answer: str) -> tuple[float, int]:
        ctx = tokenizer(context, add_special_tokens=False).input_ids
        whole = tokenizer(context + answer, add_special_tokens=False).input_ids
        with torch.no_grad():
            logits = model(torch.tensor([whole])).logits[0].log_softmax(-1)
        return sum(logits[i - 1, whole[i]].item() for i in range(len(ctx), len(whole))), len(
            whole
        ) - len(ctx)

    samples = _samples(scored, "pref")
    assert len(samples) == LIMIT
    for sample in samples:
        doc = sample["doc"]
        context = render([{"role": "user", "content": doc["prompt"]}])
        (lp_c, n_c), (lp_r, n_r) = (
            logprob(context, doc["chosen"]),
            logprob(context, doc["rejected"]),
        )
        logged = [resp[0][0] for resp in sample["resps"]]
        assert logged == pytest.approx([lp_c, lp_r], abs=1e-3)
        assert sample["acc_norm"] == float(lp_c / n_c > lp_r / n_r)
        assert (n_c, n_r) == (
            count_answer_tokens(doc["chosen"]),
            count_answer_tokens(doc["rejected"]),
        )
        assert sample["acc"] == float(lp_c > lp_r)


def test_compare_and_failures_cli_on_real_logs(
    scored: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    other = tmp_path / "other"
    shutil.copytree(scored, other)
    assert main(["compare", str(scored), str(other), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert (data["n"], data["a_only"], data["b_only"], data["mcnemar_p"]) == (LIMIT, 0, 0, 1.0)
    assert data["verdict"].startswith("INCOMPLETE")
    assert main(["failures", str(scored), "--task", "if263"]) == 0
    assert "check (checker type)" in capsys.readouterr().out


def test_eval_cli_passes_no_generation_override(tmp_path: Path, monkeypatch, capsys) -> None:
    # The CLI has no flag that leaves the served configuration; the 2,048-token default itself
    # runs end to end in test_raw_lm_eval_cli and is pinned in the task YAMLs.
    seen: dict = {}

    def fake_evaluate_run(config, **kwargs):
        seen.update(vars(config))
        return []

    monkeypatch.setattr("rsi_hub.evaluate.evaluate_run", fake_evaluate_run)
    assert main(["eval", "RUN", "--suite", "all", "--limit", "2", "--backend", "vllm"]) == 0
    assert seen["suite"] == "all" and seen["limit"] == 2 and seen["backend"] == "vllm"
    assert seen["max_gen_toks"] is None
    assert main(["eval", "RUN", "--limit", "0"]) == 2


def _offline_env(tmp_path: Path) -> dict[str, str]:
    # An empty cache, so that nothing cached on this machine can satisfy the download.
    return {
        **os.environ,
        "PYTHONPATH": str(REPO),
        "HF_HOME": str(tmp_path / "hf"),
        "HF_DATASETS_OFFLINE": "1",
        "HF_HUB_OFFLINE": "1",
    }


@pytest.mark.parametrize("suite", ["mmlu", "all"])
def test_mmlu_offline_fails_fast(tiny_run: Path, tmp_path: Path, suite: str) -> None:
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "rsi_hub", "eval", str(tiny_run), "--suite", suite],
        env=_offline_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2, done.stderr
    assert "cais/mmlu" in done.stderr and "HF_HUB_OFFLINE" in done.stderr
    if suite == "all":  # every missing dataset at once
        assert "ultrafeedback_binarized" in done.stderr
    assert "loading" not in done.stdout, "must fail before the model is loaded"
    assert time.monotonic() - started < 60
    assert not (tiny_run / "eval").exists()


def test_pref_default_source_offline_fails_fast(tiny_run: Path, monkeypatch) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(RsiHubError, match=r"ultrafeedback_binarized.*pref_demo"):
        evaluate_run(EvalConfig(tiny_run, "pref", limit=1))


def test_raw_lm_eval_cli(tiny_run: Path, tmp_path: Path) -> None:
    """The evaluator's command of the design doc, as a newcomer types it (one document).

    Shortened for the test only: transformers lets generation_config.json's max_new_tokens
    (2048, the serving contract) win over lm-eval's limit, so the copy gets 16 there as well.
    """
    run = tmp_path / "run"
    shutil.copytree(tiny_run, run)
    config = json.loads((run / "generation_config.json").read_text())
    (run / "generation_config.json").write_text(json.dumps({**config, "max_new_tokens": 16}))
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "lm_eval",
            "--include_path",
            str(REPO / "tasks" / "lm_eval"),
            "--tasks",
            "if818",
            "--model",
            "hf",
            "--model_args",
            f"pretrained={run}",
            "--apply_chat_template",
            "--limit",
            "1",
            "--device",
            "cpu",
            "--gen_kwargs",
            "max_gen_toks=16",
        ],
        env={**os.environ, "PYTHONPATH": str(REPO)},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert "if818" in done.stdout and "pass_count" in done.stdout


def test_eval_on_a_folder_that_is_not_a_model(tmp_path: Path, capsys) -> None:
    """One line saying what the folder lacks, not a list of serving-file fixes."""
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "README.md").write_text("not a model\n")
    assert main(["eval", str(folder), "--limit", "1"]) == 2
    captured = capsys.readouterr()
    assert captured.err == (
        f"rsi-hub eval: error: {folder}: not a model folder (no config.json / weights); pass a "
        "run directory (what `rsi-hub train` or `rsi-hub tiny` writes) or a staged release.\n"
    )
    assert not (folder / "eval").exists()
