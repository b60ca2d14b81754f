"""`rsi-hub rescore`: re-judge logged answers with the current checker (no model, no generation).

A checker fix (a new `CHECKER_VERSION`) changes verdicts, not answers: the answers logged under
`RUN/eval/<suite>/` are judged again, every per-document metric the checker decides is
recomputed, and the task's aggregates with the aggregation its lm-eval config recorded. The
result is a new complete eval folder, swapped in for `RUN/eval/<suite>/` (so `compare`,
`failures` and `release` read the current checker's numbers), bound to the current checker
version and the same weights hash. The folder it replaces is kept, unchanged, under
`RUN/eval/.superseded/<suite>.checker-<old version>/` (hidden: never read as a result).
"""

from __future__ import annotations

import math
import os
import shutil
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from rsi_hub import rundir
from rsi_hub.crashpoint import crash_point
from rsi_hub.errors import EvaluationInputError
from rsi_hub.evaluate import harness, store
from rsi_hub.evaluate.aggregate import task_table
from rsi_hub.evaluate.protocol import REVISE_PROTOCOL, SUITES
from rsi_hub.rundir import EvalMeta


@dataclass(frozen=True)
class Flips:
    """How many verdicts of one check type (or of whole prompts) changed, and which way."""

    fail_to_pass: int = 0
    pass_to_fail: int = 0

    @property
    def total(self) -> int:
        """Every changed verdict."""
        return self.fail_to_pass + self.pass_to_fail


@dataclass
class RescoreOutcome:
    """What `rescore_suite` re-judged and wrote.

    Attributes:
        folder: the new `RUN/eval/<suite>/`.
        superseded: where the replaced folder is kept.
        old_checker / new_checker: the checker versions before and after.
        documents: answers re-judged.
        prompts: prompt-level verdict flips (the `acc` metric).
        by_type: per check type, documents whose verdict on that type flipped.
        metrics: task -> the new aggregate metrics.
    """

    folder: Path
    superseded: Path
    old_checker: str | None
    new_checker: str
    documents: int
    prompts: Flips
    by_type: dict[str, Flips] = field(default_factory=dict)
    metrics: dict[str, dict[str, Any]] = field(default_factory=dict)


def _flip(counts: dict[str, Flips], key: str, old_pass: bool, new_pass: bool) -> None:
    if old_pass == new_pass:
        return
    current = counts.get(key, Flips())
    if new_pass:
        counts[key] = Flips(current.fail_to_pass + 1, current.pass_to_fail)
    else:
        counts[key] = Flips(current.fail_to_pass, current.pass_to_fail + 1)


def _rejudge(suite: str, doc: dict[str, Any], row: dict[str, Any]) -> dict[str, Any]:
    """The row with every checker-decided metric recomputed from its logged answer."""
    from rsi_hub.checker import check

    answer = row["filtered_resps"][0]
    verdict = check(answer, doc["checks"])
    # EV4's stop facts (stop_rate, answer_tokens) were measured at generation: they stay.
    metrics = harness.ev4_check_metrics if suite == "ev4" else harness.if_metrics
    judged = metrics(verdict)
    kept = {k: v for k, v in row.items() if not k.startswith("miss_")}
    kept.update(judged)
    kept["metrics"] = [m for m in row["metrics"] if not m.startswith("miss_")] + [
        m for m in judged if m.startswith("miss_")
    ]
    return kept


def rescore_suite(
    run: str | Path, suite: str = "if818", *, progress: Callable[[str], None] | None = None
) -> RescoreOutcome:
    """Re-judge the answers logged in `RUN/eval/<suite>/` with the current checker.

    Args:
        run: the run directory.
        suite: the folder under `RUN/eval/` (a suite, or a candidate prompt's folder).
        progress: called with one line per step.

    Raises:
        EvaluationFileError: the folder is missing. EvaluationInputError: the folder is not
            judged by the checker (PREF, MMLU), or is a verify-and-revise evaluation (its
            revision requests came from the old checker: run it again).
    """
    from rsi_hub.checker import CHECKER_VERSION, sandbox_backend

    say = progress or (lambda _line: None)
    record = store.read_suite_dir(run, suite)
    meta = record.meta
    protocol = SUITES.get(meta.suite)
    if protocol is None or not protocol.generates:
        raise EvaluationInputError(
            f"{record.folder}: {meta.suite} is not judged by the checker (log-likelihood); "
            "there is nothing to rescore.",
            field="suite",
        )
    if meta.extra.get("protocol") == REVISE_PROTOCOL:
        raise EvaluationInputError(
            f"{record.folder}: a verify-and-revise evaluation cannot be rescored (the old "
            f"checker chose its revision requests); run `rsi-hub eval {run} --revise K` again.",
            field="suite",
        )
    say(f"{suite}: re-judging the logged answers with checker {CHECKER_VERSION}")
    prompts: dict[str, Flips] = {}
    by_type: dict[str, Flips] = {}
    samples: dict[str, list[dict[str, Any]]] = {}
    for task, row in record.samples():
        new = _rejudge(meta.suite, row["doc"], row)
        _flip(prompts, "acc", bool(row["acc"]), bool(new["acc"]))
        for key in new:
            if key.startswith("miss_"):
                _flip(by_type, key[5:], not row.get(key, 0.0), not new[key])
        samples.setdefault(task, []).append(new)
    results = dict(record.results)
    results["results"] = dict(results.get("results", {}))
    for task, rows in samples.items():
        config = results.get("configs", {}).get(task, {})
        metric_list = config.get("metric_list", [])
        results["results"][task] = task_table(metric_list, rows, results["results"].get(task))
    new_meta = EvalMeta.from_json(
        {
            **meta.to_json(),
            "checker_version": CHECKER_VERSION,
            "sandbox_backend": sandbox_backend(),
            "finished_at": datetime.now(UTC).isoformat(timespec="seconds"),
        }
    )
    superseded = _keep_superseded(run, suite, record.folder, meta.checker_version)
    crash_point()
    new_meta.extra["rescored_from"] = {
        "checker_version": meta.checker_version,
        "finished_at": meta.finished_at,
        "kept_at": str(superseded),
    }
    folder = store.write_suite_dir(run, suite, results, samples, new_meta)
    metrics = {task: store.read_suite_dir(run, suite).metrics(task) for task in samples}
    return RescoreOutcome(
        folder,
        superseded,
        meta.checker_version,
        CHECKER_VERSION,
        sum(len(rows) for rows in samples.values()),
        prompts.get("acc", Flips()),
        dict(sorted(by_type.items())),
        metrics,
    )


def _keep_superseded(run: str | Path, suite: str, folder: Path, version: str | None) -> Path:
    """Copy the folder being replaced to `RUN/eval/.superseded/` (copied, then renamed in)."""
    target = rundir.superseded_eval_dir(run, suite, version)
    partial = target.with_name(f".{target.name}.partial")
    shutil.rmtree(partial, ignore_errors=True)
    shutil.copytree(folder, partial)
    if target.exists():  # the same version rescored twice: the newer copy replaces it
        shutil.rmtree(target)
    os.replace(partial, target)
    rundir.fsync_dir(target.parent)
    return target


def format_rescore(outcome: RescoreOutcome) -> str:
    """The lines `rsi-hub rescore` prints: the flips by check type and the new scores."""
    o = outcome
    flipped = sum(f.total for f in o.by_type.values())
    lines = [
        f"{o.folder}: {o.documents} logged answers re-judged with checker {o.new_checker} "
        f"(was {o.old_checker}); {flipped} check verdict(s) flipped, "
        f"{o.prompts.total} prompt verdict(s)",
    ]
    for kind, flips in o.by_type.items():
        lines.append(
            f"  {kind}: {flips.fail_to_pass} fail -> pass, {flips.pass_to_fail} pass -> fail"
        )
    lines.append(
        f"  prompts: {o.prompts.fail_to_pass} fail -> pass, {o.prompts.pass_to_fail} pass -> fail"
    )
    for task, metrics in o.metrics.items():
        shown = ", ".join(
            f"{k} {v:g}"
            for k, v in metrics.items()
            if not k.endswith("_stderr")
            and isinstance(v, float)
            and not math.isnan(v)
            and not k.startswith("miss_")
        )
        lines.append(f"  {task}: {shown}")
    lines.append(f"  the replaced folder is kept at {o.superseded}")
    return "\n".join(lines)
