"""`rsi-hub compare` on constructed logs: statistics against independent computations, verdicts."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from scipy.stats import binomtest

from rsi_hub.cli import main
from rsi_hub.errors import EvaluationInputError, RsiHubError
from rsi_hub.evaluate import stats, store
from rsi_hub.evaluate.compare import (
    AcceptanceRule,
    DocumentMismatchError,
    compare_runs,
    load_guard_rule,
)
from rsi_hub.rundir import EvalMeta

GENERATION = {"until": ["<|im_end|>"], "max_gen_toks": 2048, "do_sample": False}
GOOD_GUARDS = {
    "if263": ("pass_count", 199.0),
    "mmlu": ("acc", 0.7158),
    "ev4": ("checks_passed", 105.0),
    "pref": ("acc_norm", 0.6182),
}


def _meta(suite: str, *, limit: int | None = None, weights: str = "w" * 64) -> EvalMeta:
    return EvalMeta(
        suite=suite,
        weights_sha256=weights,
        checker_version="1.0",
        system_prompt_id=None if suite == "if263" else "k0",
        generation=GENERATION,
        served_configuration=True,
        limit=limit,
    )


def _doc(i: int, variant: str = "") -> dict[str, Any]:
    return {"id": f"if818-{i:04d}", "prompt": f"prompt {i}{variant}", "checks": []}


def _sample(i: int, passed: bool, variant: str = "") -> dict[str, Any]:
    doc = _doc(i, variant)
    text = json.dumps(doc, indent=2, ensure_ascii=False)
    return {
        "doc_id": i,
        "doc": doc,
        "doc_hash": hashlib.sha256(text.encode()).hexdigest(),
        "prompt_hash": hashlib.sha256(doc["prompt"].encode()).hexdigest(),
        "acc": float(passed),
        "pass_count": float(passed),
    }


def write_if818(run: Path, passes: list[bool], *, limit: int | None = None, variant_at=()) -> None:
    samples = [_sample(i, p, "x" if i in variant_at else "") for i, p in enumerate(passes)]
    results = {"results": {"if818": {"acc,none": float(np.mean(passes))}}}
    store.write_suite_dir(run, "if818", results, {"if818": samples}, _meta("if818", limit=limit))


def write_guards(run: Path, values: dict[str, tuple[str, float]], **meta: Any) -> None:
    for suite, (metric, value) in values.items():
        results = {"results": {suite: {f"{metric},none": value}}}
        store.write_suite_dir(run, suite, results, {}, _meta(suite, **meta))


def paired_vectors(n: int, a_only: int, b_only: int, both: int) -> tuple[list[bool], list[bool]]:
    """Vectors with the given discordant counts, shuffled so order plays no part."""
    rng = np.random.default_rng(7)
    kinds = ["a"] * a_only + ["b"] * b_only + ["both"] * both
    kinds += ["none"] * (n - len(kinds))
    order = rng.permutation(len(kinds))
    kinds = [kinds[i] for i in order]
    return [k in ("a", "both") for k in kinds], [k in ("b", "both") for k in kinds]


@pytest.fixture
def runs(tmp_path: Path) -> tuple[Path, Path]:
    """Incumbent A 552/818 and candidate B 562/818 (card section 4), B with good guards."""
    a, b = paired_vectors(818, a_only=40, b_only=50, both=512)
    run_a, run_b = tmp_path / "A", tmp_path / "B"
    write_if818(run_a, a)
    write_if818(run_b, b)
    write_guards(run_b, GOOD_GUARDS)
    return run_a, run_b


@pytest.mark.parametrize(
    ("a_only", "b_only"), [(40, 50), (0, 0), (0, 7), (13, 2), (70, 110), (300, 340)]
)
def test_mcnemar_matches_scipy_exact_binomial(a_only: int, b_only: int) -> None:
    expected = 1.0 if a_only + b_only == 0 else binomtest(b_only, a_only + b_only, 0.5).pvalue
    assert stats.mcnemar_exact_p(a_only, b_only) == pytest.approx(expected, rel=1e-12, abs=0)


def test_compare_statistics_against_independent_computation(runs: tuple[Path, Path]) -> None:
    run_a, run_b = runs
    c = compare_runs(run_a, run_b, bootstrap_iters=20_000, seed=3)
    assert (c.n, c.a, c.b, c.a_only, c.b_only) == (818, 552, 562, 40, 50)
    assert c.mcnemar_p == pytest.approx(binomtest(50, 90, 0.5).pvalue, rel=1e-12)

    # Independent bootstrap: resample item indices directly with another generator.
    a, b = paired_vectors(818, a_only=40, b_only=50, both=512)
    d = np.array(b, dtype=float) - np.array(a, dtype=float)
    rng = np.random.default_rng(12345)
    means = np.array([d[rng.integers(0, d.size, d.size)].mean() for _ in range(20_000)]) * 100
    low, high = np.quantile(means, [0.025, 0.975])
    assert c.ci95[0] == pytest.approx(low, abs=0.15)
    assert c.ci95[1] == pytest.approx(high, abs=0.15)
    assert c.ci95[0] < 100 * 10 / 818 < c.ci95[1]


def test_bootstrap_is_seeded() -> None:
    a, b = paired_vectors(300, 20, 30, 150)
    assert stats.paired_bootstrap_ci(a, b, seed=1) == stats.paired_bootstrap_ci(a, b, seed=1)


def test_not_significant_gain_is_rejected_with_guards_holding(runs: tuple[Path, Path]) -> None:
    c = compare_runs(*runs)
    assert c.accepted is False
    assert c.verdict.startswith("REJECT: no paired-significant gain")
    assert all(g.status == "ok" for g in c.guards)


def test_significant_gain_with_guards_is_accepted(tmp_path: Path) -> None:
    a, b = paired_vectors(818, a_only=20, b_only=60, both=500)
    write_if818(tmp_path / "A", a)
    write_if818(tmp_path / "B", b)
    write_guards(tmp_path / "B", GOOD_GUARDS)
    c = compare_runs(tmp_path / "A", tmp_path / "B")
    assert c.accepted is True and c.verdict.startswith("ACCEPT")
    assert c.mcnemar_p < 0.05 and c.ci95[0] > 0


def test_guard_failure_rejects(tmp_path: Path) -> None:
    a, b = paired_vectors(818, a_only=20, b_only=60, both=500)
    write_if818(tmp_path / "A", a)
    write_if818(tmp_path / "B", b)
    write_guards(tmp_path / "B", {**GOOD_GUARDS, "if263": ("pass_count", 190.0)})
    c = compare_runs(tmp_path / "A", tmp_path / "B")
    assert c.accepted is False
    assert c.verdict.startswith("REJECT: B breaks guard(s) IF263 190 < 193")
    # A looser threshold from the command line turns it into an accept.
    rule = AcceptanceRule().with_thresholds({"if263": 190})
    assert compare_runs(tmp_path / "A", tmp_path / "B", rule=rule).accepted is True


def test_missing_and_limited_guards_are_named(tmp_path: Path) -> None:
    a, b = paired_vectors(818, a_only=20, b_only=60, both=500)
    write_if818(tmp_path / "A", a)
    write_if818(tmp_path / "B", b)
    write_guards(tmp_path / "B", {"if263": GOOD_GUARDS["if263"], "ev4": GOOD_GUARDS["ev4"]})
    write_guards(tmp_path / "B", {"pref": GOOD_GUARDS["pref"]}, limit=20)
    c = compare_runs(tmp_path / "A", tmp_path / "B")
    assert c.accepted is None
    assert c.verdict.startswith("INCOMPLETE")
    assert "MMLU (not evaluated)" in c.verdict
    assert "PREF (ran with --limit 20)" in c.verdict


def test_guard_from_other_weights_is_not_used(tmp_path: Path) -> None:
    a, b = paired_vectors(818, a_only=20, b_only=60, both=500)
    write_if818(tmp_path / "A", a)
    write_if818(tmp_path / "B", b)
    write_guards(tmp_path / "B", GOOD_GUARDS)
    write_guards(tmp_path / "B", {"mmlu": GOOD_GUARDS["mmlu"]}, weights="0" * 64)
    c = compare_runs(tmp_path / "A", tmp_path / "B")
    assert c.accepted is None and "MMLU (scored other weights" in c.verdict


def test_document_hash_mismatch_is_refused(tmp_path: Path) -> None:
    a, b = paired_vectors(50, 5, 5, 20)
    write_if818(tmp_path / "A", a)
    write_if818(tmp_path / "B", b, variant_at={3})
    with pytest.raises(DocumentMismatchError, match="same id but different content"):
        compare_runs(tmp_path / "A", tmp_path / "B")
    assert main(["compare", str(tmp_path / "A"), str(tmp_path / "B")]) == 2


def test_different_limits_pair_only_shared_documents(tmp_path: Path) -> None:
    a, b = paired_vectors(40, 5, 5, 20)
    write_if818(tmp_path / "A", a)
    write_if818(tmp_path / "B", b[:25], limit=25)
    c = compare_runs(tmp_path / "A", tmp_path / "B")
    assert (c.n, c.unmatched_a, c.unmatched_b) == (25, 15, 0)
    assert c.accepted is None


def test_protocol_difference_is_refused(tmp_path: Path) -> None:
    a, b = paired_vectors(30, 5, 5, 10)
    write_if818(tmp_path / "A", a)
    write_if818(tmp_path / "B", b)
    meta_path = tmp_path / "B" / "eval" / "if818" / "meta.json"
    meta = json.loads(meta_path.read_text())
    meta["checker_version"] = "2.0"
    meta_path.write_text(json.dumps(meta))
    with pytest.raises(RsiHubError, match="checker version"):
        compare_runs(tmp_path / "A", tmp_path / "B")


def test_missing_eval_folder_says_what_to_run(tmp_path: Path) -> None:
    with pytest.raises(RsiHubError, match="rsi-hub eval"):
        compare_runs(tmp_path / "A", tmp_path / "B")


def test_cli_json_keys(runs: tuple[Path, Path], capsys: pytest.CaptureFixture[str]) -> None:
    run_a, run_b = runs
    assert main(["compare", str(run_a), str(run_b), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    for key in ("a", "b", "n", "a_only", "b_only", "mcnemar_p", "ci95", "verdict"):
        assert key in data
    assert (data["a"], data["b"], data["n"]) == (552, 562, 818)
    assert len(data["ci95"]) == 2 and data["ci95"][0] < data["ci95"][1]


def test_cli_text_report(runs: tuple[Path, Path], capsys: pytest.CaptureFixture[str]) -> None:
    run_a, run_b = runs
    assert main(["compare", str(run_a), str(run_b), "--guard", "if263=200"]) == 0
    out = capsys.readouterr().out
    assert "discordant: A only 40, B only 50" in out
    assert "IF263 >= 200: 199 fail" in out
    assert "verdict: REJECT: B breaks guard(s) IF263 199 < 200" in out


def test_comparing_a_run_with_itself_warns(runs, capsys: pytest.CaptureFixture[str]) -> None:
    run_a, run_b = runs
    assert main(["compare", str(run_a), str(run_a)]) == 0
    assert capsys.readouterr().err.splitlines() == [
        f"rsi-hub compare: warning: RUN_A and RUN_B are the same folder ({run_a}): a run "
        "compared with itself; pass the incumbent and the candidate."
    ]
    # Two folders, one set of weights (the fixture's runs share their weights hash).
    assert main(["compare", str(run_a), str(run_b), "--json"]) == 0
    captured = capsys.readouterr()
    warning = (
        f"RUN_A and RUN_B were scored on the same weights (sha256 {'w' * 12}…): any difference "
        "is decoding noise, not a better model."
    )
    assert captured.err.splitlines() == [f"rsi-hub compare: warning: {warning}"]
    assert json.loads(captured.out)["warnings"] == [warning]


def test_runs_on_different_weights_give_no_warning(tmp_path: Path, capsys) -> None:
    a, b = paired_vectors(818, a_only=40, b_only=50, both=512)
    for name, passes, weights in (("A", a, "a" * 64), ("B", b, "b" * 64)):
        samples = [_sample(i, p) for i, p in enumerate(passes)]
        results = {"results": {"if818": {"acc,none": float(np.mean(passes))}}}
        meta = _meta("if818", weights=weights)
        store.write_suite_dir(tmp_path / name, "if818", results, {"if818": samples}, meta)
    assert main(["compare", str(tmp_path / "A"), str(tmp_path / "B")]) == 0
    assert capsys.readouterr().err == ""


NANO_GUARDS = Path(__file__).resolve().parents[1] / "release" / "nano" / "guards.yaml"


def _nano_runs(tmp_path: Path, a_guards: dict | None, b_guards: dict) -> tuple[Path, Path]:
    a, b = paired_vectors(818, a_only=20, b_only=60, both=150)
    write_if818(tmp_path / "A", a)
    write_if818(tmp_path / "B", b)
    if a_guards is not None:
        write_guards(tmp_path / "A", a_guards)
    write_guards(tmp_path / "B", b_guards)
    return tmp_path / "A", tmp_path / "B"


def test_nano_guards_file_states_if263_and_ev4_with_reasons() -> None:
    rule = load_guard_rule(NANO_GUARDS)
    assert [(g.label, g.threshold, g.max_drop) for g in rule.guards] == [
        ("IF263", 13.0, 8.0),
        ("EV4", 15.0, 6.0),
    ]
    assert rule.alpha == 0.05


def test_relative_guards_hold_within_the_drop_and_fail_beyond_it(tmp_path: Path) -> None:
    rule = load_guard_rule(NANO_GUARDS)
    incumbent = {"if263": ("pass_count", 60.0), "ev4": ("checks_passed", 40.0)}
    run_a, run_b = _nano_runs(
        tmp_path, incumbent, {"if263": ("pass_count", 52.0), "ev4": ("checks_passed", 34.0)}
    )
    c = compare_runs(run_a, run_b, rule=rule)
    # MMLU and PREF are not guards at this scale: a gain with IF263 and EV4 held is accepted.
    assert c.accepted is True and c.verdict.startswith("ACCEPT")
    assert [(g.label, g.threshold, g.note) for g in c.guards] == [
        ("IF263", 52.0, "A's 60 - 8"),
        ("EV4", 34.0, "A's 40 - 6"),
    ]
    write_guards(run_b, {"if263": ("pass_count", 51.0)})  # one prompt more than the drop
    c = compare_runs(run_a, run_b, rule=rule)
    assert c.accepted is False and c.verdict == "REJECT: B breaks guard(s) IF263 51 < 52"


def test_relative_guards_fall_back_to_the_absolute_threshold(tmp_path: Path) -> None:
    # The untrained init is scored on IF-818 only: B is held to the absolute floor.
    rule = load_guard_rule(NANO_GUARDS)
    run_a, run_b = _nano_runs(
        tmp_path, None, {"if263": ("pass_count", 13.0), "ev4": ("checks_passed", 14.0)}
    )
    c = compare_runs(run_a, run_b, rule=rule)
    assert [(g.label, g.threshold, g.status) for g in c.guards] == [
        ("IF263", 13.0, "ok"),
        ("EV4", 15.0, "fail"),
    ]
    assert c.verdict == "REJECT: B breaks guard(s) EV4 14 < 15"


def test_guards_file_errors_name_the_file_and_the_field(tmp_path: Path) -> None:
    bad = tmp_path / "guards.yaml"
    bad.write_text("guards:\n- {label: IF263, suite: if263, metric: pass_count, threshold: 8}\n")
    with pytest.raises(
        EvaluationInputError, match=r"guards.yaml: guard .* lacks or mistypes 'why'"
    ):
        load_guard_rule(bad)
    bad.write_text("guards:\n- {label: X, suite: nope, metric: m, threshold: 1, why: w}\n")
    with pytest.raises(EvaluationInputError, match="unknown suite 'nope'"):
        load_guard_rule(bad)


def test_cli_guards_option(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run_a, run_b = _nano_runs(
        tmp_path, None, {"if263": ("pass_count", 30.0), "ev4": ("checks_passed", 30.0)}
    )
    assert main(["compare", str(run_a), str(run_b), "--guards", str(NANO_GUARDS)]) == 0
    out = capsys.readouterr().out
    assert "IF263 >= 13: 30 ok" in out and "EV4 >= 15: 30 ok" in out and "MMLU" not in out
    assert "verdict: ACCEPT" in out
