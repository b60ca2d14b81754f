"""Reading a run's evaluation results (`RUN/eval/<suite>/`) for its release card.

What is read, per suite folder: `meta.json` with `weights_sha256` (the sha256 of the weights that
were scored, as `rsi_hub.hashing.weights_sha256` computes it) and the scores, either in
`meta.json` itself (under `metrics` or `results`) or in lm-evaluation-harness result files
(`results*.json`, `{"results": {task: {"metric,filter": value}}}`). A suite folder without
`meta.json` or without a weights hash is refused: a number not bound to weights is not reported.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rsi_hub.errors import ReleaseError

EVAL_DIR = "eval"
META_FILE = "meta.json"
# Count metrics (passed out of n) in the order they are looked for, then rate metrics.
_COUNT_KEYS = (("passed", "n"), ("prompts_passed", "prompts"), ("checks_passed", "checks"))
_RATE_KEYS = ("acc_norm", "acc", "accuracy", "prompt_acc", "exact_match")
_LEADING_NUMBER = re.compile(r"[-+]?\d[\d,]*(?:\.\d+)?")


@dataclass(frozen=True)
class SuiteResult:
    """The score of one suite on one set of weights."""

    suite: str
    folder: Path
    weights_sha256: str
    value: float
    passed: int | None = None
    n: int | None = None
    limit: int | None = None

    @property
    def display(self) -> str:
        """As the card prints it: `passed/n` for counts, four decimals for rates."""
        if self.passed is not None and self.n is not None:
            return f"{self.passed}/{self.n}"
        return f"{self.value:.4f}"

    def agrees_with(self, cell: str) -> bool:
        """Whether a card cell such as `562`, `562/818` or `0.7158–0.7167` states this score."""
        match = _LEADING_NUMBER.search(cell)
        if match is None:
            return False
        stated = float(match.group().replace(",", ""))
        if self.passed is not None:
            return stated == self.passed
        return abs(stated - self.value) < 5e-5


def _flatten_metrics(metrics: dict[str, Any]) -> dict[str, Any]:
    # lm-eval names metrics "acc_norm,none"; keep the metric's own name.
    return {key.split(",")[0]: value for key, value in metrics.items()}


def _lm_eval_metrics(folder: Path) -> dict[str, Any]:
    metrics: dict[str, Any] = {}
    for path in sorted(folder.rglob("results*.json")):
        results = json.loads(path.read_text(encoding="utf-8")).get("results", {})
        for task_metrics in results.values():
            if isinstance(task_metrics, dict):
                metrics.update(_flatten_metrics(task_metrics))
    return metrics


def _score(metrics: dict[str, Any]) -> tuple[float, int | None, int | None] | None:
    for passed_key, n_key in _COUNT_KEYS:
        passed, n = metrics.get(passed_key), metrics.get(n_key)
        if isinstance(passed, int) and isinstance(n, int) and n > 0:
            return passed / n, passed, n
    for key in _RATE_KEYS:
        value = metrics.get(key)
        if isinstance(value, int | float) and not isinstance(value, bool):
            return float(value), None, None
    return None


def read_suite_result(folder: Path) -> SuiteResult:
    """Read one `RUN/eval/<suite>/` folder.

    Raises:
        ReleaseError: no `meta.json`, no weights hash in it, or no score found (names the file).
    """
    meta_path = folder / META_FILE
    fix = f"re-run `rsi-hub eval RUN --suite {folder.name}` or delete {folder}"
    if not meta_path.is_file():
        raise ReleaseError(
            f"{meta_path}: missing, so these results are bound to no weights; {fix}."
        )
    try:
        meta = json.loads(meta_path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as err:
        raise ReleaseError(f"{meta_path}: not valid JSON ({err}); {fix}.") from err
    weights = meta.get("weights_sha256")
    if not isinstance(weights, str) or not weights:
        raise ReleaseError(f"{meta_path}: field weights_sha256 is missing; {fix}.")
    metrics = _flatten_metrics(meta.get("metrics") or meta.get("results") or {})
    score = _score(metrics) or _score(_lm_eval_metrics(folder))
    if score is None:
        raise ReleaseError(f"{meta_path}: no score found (passed/n or acc_norm/acc); {fix}.")
    value, passed, n = score
    limit = meta.get("limit")
    return SuiteResult(
        suite=str(meta.get("suite") or folder.name),
        folder=folder,
        weights_sha256=weights,
        value=value,
        passed=passed,
        n=n,
        limit=limit if isinstance(limit, int) else None,
    )


def read_eval_results(run: str | Path, weights_sha256: str) -> dict[str, SuiteResult]:
    """Every suite result under `run/eval/`, refusing any scored on other weights.

    Args:
        run: the run directory.
        weights_sha256: the hash of the weights being released.

    Raises:
        ReleaseError: a result's recorded weights hash differs (names the file and the fix), or a
            result folder is malformed.
    """
    eval_dir = Path(run) / EVAL_DIR
    if not eval_dir.is_dir():
        return {}
    results: dict[str, SuiteResult] = {}
    for folder in sorted(p for p in eval_dir.iterdir() if p.is_dir()):
        result = read_suite_result(folder)
        if result.weights_sha256 != weights_sha256:
            raise ReleaseError(
                f"{folder / META_FILE}: scored weights {result.weights_sha256[:12]}…, but the "
                f"weights being released are {weights_sha256[:12]}…: these results are not of "
                f"this checkpoint. Re-run `rsi-hub eval {run} --suite {folder.name}` on it, or "
                f"move {folder} out of {eval_dir}."
            )
        results[result.suite] = result
    return results
