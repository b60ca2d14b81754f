"""Constructed run directories with evaluation results in evaluate's own layout (its store).

IF suites get real checker constraints and responses, so that `rsi-hub failures` (the checker's
failure analysis) reads them like real logs; the other suites get per-document 0/1 metrics.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import torch
from safetensors.torch import save_file

WORDS = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta"]
# Check sets the IF documents rotate through: (constraints, passing answer, failing answer).
IF_ITEMS: list[tuple[list[dict[str, Any]], str, str]] = [
    ([{"type": "word_eq", "n": 3}], "alpha beta gamma", "alpha beta"),
    (
        [{"type": "word_times", "word": "beta", "n": 2}, {"type": "no_word", "word": "zeta"}],
        "beta alpha beta",
        "beta alpha zeta",
    ),
    ([{"type": "no_word", "word": "eta"}], "alpha", "eta"),
]


def _meta(weights: str, suite: str, limit: int | None) -> Any:
    from rsi_hub.checker import CHECKER_VERSION
    from rsi_hub.rundir import EvalMeta

    return EvalMeta(
        suite=suite,
        weights_sha256=weights,
        checker_version=CHECKER_VERSION,
        system_prompt_id=None if suite == "if263" else "k0",
        generation={"until": ["<|im_end|>"]},
        served_configuration=True,
        limit=limit,
    )


def if_samples(task: str, outcomes: Sequence[bool]) -> list[dict[str, Any]]:
    """IF samples whose responses pass or fail real checker constraints as asked."""
    from rsi_hub.checker import check

    rows = []
    for i, passed in enumerate(outcomes):
        checks, good, bad = IF_ITEMS[i % len(IF_ITEMS)]
        response = good if passed else bad
        verdict = check(response, checks)
        assert verdict.passed == passed
        rows.append(
            {
                "doc_id": i,
                "doc": {"id": f"{task}-{i}", "checks": checks},
                "doc_hash": f"hash-{task}-{i}",
                "prompt_hash": f"p-{i}",
                "filtered_resps": [response],
                "acc": float(passed),
            }
        )
    return rows


def make_run(
    root: Path,
    name: str,
    *,
    seed: int,
    if818: Sequence[bool] | None = None,
    if263: Sequence[bool] | None = None,
    ev4: float | None = None,
    pref: float | None = None,
    mmlu: float | None = None,
    evidence: dict[str, Any] | None = None,
    limit: int | None = None,
) -> Path:
    """A run directory with a one-tensor checkpoint and `eval/` results for the given suites."""
    from rsi_hub.evaluate import store
    from rsi_hub.hashing import weights_sha256

    run = root / name
    run.mkdir(parents=True)
    (run / "config.json").write_text("{}")
    save_file({"w": torch.full((4,), float(seed))}, run / "model.safetensors")
    (run / "training_evidence.json").write_text(json.dumps(evidence or {"kind": "test run"}))
    weights = weights_sha256(run)
    for suite, outcomes in (("if818", if818), ("if263", if263)):
        if outcomes is not None:
            results = {"results": {suite: {"pass_count,none": sum(outcomes)}}}
            samples = {suite: if_samples(suite, outcomes)}
            store.write_suite_dir(run, suite, results, samples, _meta(weights, suite, limit))
    for suite, metric, value in (("ev4", "checks_passed", ev4), ("pref", "acc_norm", pref),
                                 ("mmlu", "acc", mmlu)):  # fmt: skip
        if value is None:
            continue
        paired = "acc_norm" if suite == "pref" else "acc"
        rows = [
            {"doc_id": i, "doc": {"id": i}, "doc_hash": f"{suite}-{i}", paired: float(i % 2)}
            for i in range(10)
        ]
        results = {"results": {suite: {f"{metric},none": value}}}
        store.write_suite_dir(run, suite, results, {suite: rows}, _meta(weights, suite, limit))
    return run


def outcomes_with(n: int, passes: Sequence[int]) -> list[bool]:
    """n outcomes passing exactly at the given indices."""
    wanted = set(passes)
    return [i in wanted for i in range(n)]
