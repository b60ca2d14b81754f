"""Per-document metrics to a task's results table, as lm-eval aggregates them.

`rsi-hub rescore` rebuilds a table from re-judged rows with the aggregation the task's lm-eval
config recorded in results.json (`mean`, or the source of `harness.total` / `harness.miss_rate`);
`rsi-hub eval --revise` builds one for rows it judged itself. Both go through `task_table`, so
a table rebuilt from unchanged rows equals lm-eval's own, stderr included.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from rsi_hub.errors import EvaluationInputError
from rsi_hub.evaluate import harness

_DEF = re.compile(r"def (\w+)\(")
_OWN = {"total": harness.total, "miss_rate": harness.miss_rate}


def aggregate(aggregation: str, values: Sequence[float]) -> tuple[float, Any]:
    """(value, stderr) of one metric; `aggregation` is `mean`, `total`, `miss_rate` or the
    source text of one of them (as lm-eval writes a function into results.json)."""
    from lm_eval.api.metrics import mean, mean_stderr

    match = _DEF.match(aggregation)
    name = match.group(1) if match else aggregation
    if name == "mean":
        return mean(list(values)), (mean_stderr(list(values)) if len(values) > 1 else "N/A")
    if name not in _OWN:
        raise EvaluationInputError(
            f"unknown aggregation {aggregation[:60]!r} in results.json; expected mean, total or "
            "miss_rate (re-run `rsi-hub eval`).",
            field="aggregation",
        )
    return _OWN[name](values), "N/A"


def task_table(
    metric_list: Sequence[dict[str, Any]],
    rows: Sequence[dict[str, Any]],
    base: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """A task's results table (`"acc,none"`, `"acc_stderr,none"`, …) from per-document rows.

    Args:
        metric_list: the task config's metrics, each `{"metric", "aggregation"}`.
        rows: per-document metrics (a row lacking a metric does not count towards it).
        base: the previous table; its keys without a filter suffix (name, alias) are kept.
    """
    table = {k: v for k, v in (base or {}).items() if "," not in k}
    for entry in metric_list:
        metric = entry["metric"]
        values = [float(row[metric]) for row in rows if metric in row]
        if not values:
            continue  # lm-eval leaves out a metric no document reported
        value, stderr = aggregate(entry["aggregation"], values)
        table[f"{metric},none"] = value
        table[f"{metric}_stderr,none"] = stderr
    return table
