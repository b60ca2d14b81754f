"""Reading a run's evaluation results (`RUN/eval/<suite>/`, written by `rsi-hub eval`) for its card.

Each suite folder is read through `rsi_hub.evaluate.store` (`results.json` from lm-eval and
`meta.json` with the sha256 of the weights that were scored). A folder whose `meta.json` records
no weights hash, or another one than the weights being released, is refused: a number not bound
to these weights is never printed in their card. A folder whose `meta.json` says
`served_configuration: false` (a candidate system prompt of `rsi-hub prompt-search`, under
`RUN/eval/<suite>.prompt-<id>/`, or a test-only generation limit) is left out: it scored
something other than what is released.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rsi_hub import rundir
from rsi_hub.errors import ReleaseError, RsiHubError
from rsi_hub.evaluate.store import SuiteRecord, read_suite_dir

# Count metrics (passed, out of) of each kind of task, then rate metrics, in the order looked for.
_COUNT_KEYS = (("pass_count", None), ("checks_passed", "checks_total"))
_RATE_KEYS = ("acc_norm", "acc")
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


def _as_count(value: Any) -> int | None:
    # lm-eval aggregates sums as floats (562.0).
    if isinstance(value, int | float) and not isinstance(value, bool) and float(value).is_integer():
        return int(value)
    return None


def _n_samples(record: SuiteRecord, task: str) -> int | None:
    n = (record.meta.n_samples or {}).get(task)
    return n if isinstance(n, int) else None


def suite_result(record: SuiteRecord) -> SuiteResult:
    """The headline score of one finished evaluation.

    Raises:
        ReleaseError: no weights hash in `meta.json`, or no score in `results.json`.
    """
    suite = str(record.meta.suite or record.folder.name)
    fix = f"re-run `rsi-hub eval RUN --suite {suite}` or move {record.folder} away"
    weights = record.meta.weights_sha256
    if not isinstance(weights, str) or not weights:
        raise ReleaseError(
            f"{rundir.meta_path(record.folder)}: field weights_sha256 is missing, so these results are "
            f"bound to no weights; {fix}."
        )
    try:
        metrics = record.metrics(suite)
    except RsiHubError as err:
        raise ReleaseError(f"{err}; {fix}.") from err
    limit = record.meta.limit
    common = {"suite": suite, "folder": record.folder, "weights_sha256": weights}
    common["limit"] = limit if isinstance(limit, int) else None
    for passed_key, total_key in _COUNT_KEYS:
        passed = _as_count(metrics.get(passed_key))
        total = _as_count(metrics.get(total_key)) if total_key else _n_samples(record, suite)
        if passed is not None and total:
            return SuiteResult(value=passed / total, passed=passed, n=total, **common)
    for key in _RATE_KEYS:
        value = metrics.get(key)
        if isinstance(value, int | float) and not isinstance(value, bool):
            return SuiteResult(value=float(value), n=_n_samples(record, suite), **common)
    raise ReleaseError(
        f"{record.folder}: no score (pass_count, checks_passed, acc_norm or acc); {fix}."
    )


def read_eval_results(run: str | Path, weights_sha256: str) -> dict[str, SuiteResult]:
    """Every served-configuration suite result under `run/eval/`, refusing any scored on other
    weights (results with `served_configuration: false` in meta.json are skipped).

    Args:
        run: the run directory.
        weights_sha256: the hash of the weights being released.

    Raises:
        ReleaseError: a result's recorded weights hash differs (names the file and the fix), or a
            result folder is malformed.
    """
    eval_dir = rundir.eval_root(run)
    if not eval_dir.is_dir():
        return {}
    results: dict[str, SuiteResult] = {}
    # Hidden folders are evaluate's half-written or replaced copies, never results.
    for folder in sorted(
        p for p in eval_dir.iterdir() if p.is_dir() and not p.name.startswith(".")
    ):
        try:
            record = read_suite_dir(run, folder.name)
        except RsiHubError as err:
            raise ReleaseError(f"{err}; re-run `rsi-hub eval` or move {folder} away.") from err
        if record.meta.served_configuration is False:
            continue  # not the configuration being released (e.g. a candidate system prompt)
        result = suite_result(record)
        if result.weights_sha256 != weights_sha256:
            raise ReleaseError(
                f"{rundir.meta_path(folder)}: scored weights {result.weights_sha256[:12]}…, but the "
                f"weights being released are {weights_sha256[:12]}…: these results are not of "
                f"this checkpoint. Re-run `rsi-hub eval {run} --suite {folder.name}` on it, or "
                f"move {folder} out of {eval_dir}."
            )
        results[result.suite] = result
    return results
