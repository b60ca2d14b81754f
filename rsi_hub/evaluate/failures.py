"""`rsi-hub failures`: card section 5's failure table from a run's logged samples.

The logged answers are judged again by the checker and handed to the checker's own failure
analysis (`rsi_hub.checker.failure_analysis`), so the table uses the checker's counting rules.
The re-judged pass count must equal the logged one: a mismatch means the logs were scored by
other semantics and is refused rather than silently reported.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rsi_hub.errors import EvaluationError, EvaluationInputError
from rsi_hub.evaluate import store
from rsi_hub.evaluate.protocol import SUITES

#: The suites judged by the checker (MMLU and PREF have no checks to analyse).
CHECKED_SUITES: tuple[str, ...] = tuple(name for name, s in SUITES.items() if s.generates)


@dataclass(frozen=True)
class FailureReport:
    """The analysis of one suite of one run, and where it came from."""

    run: str
    task: str
    analysis: Any  # rsi_hub.checker.FailureAnalysis
    checker_version: str
    limit: int | None

    def to_json(self) -> dict[str, Any]:
        """The checker's analysis as JSON, plus the run, task, checker version and limit."""
        return {
            "run": self.run,
            "task": self.task,
            "checker_version": self.checker_version,
            "limit": self.limit,
            **self.analysis.to_json(),
        }

    def render(self) -> str:
        """Card section 5's table as text (the checker's renderer), with a one-line heading."""
        from rsi_hub.checker import render_failure_table

        scope = f" (first {self.limit} documents only)" if self.limit else ""
        return f"{self.task} of {self.run}{scope}\n" + render_failure_table(self.analysis)


def failure_report(run: str | Path, task: str = "if818") -> FailureReport:
    """Analyse the failures of `run` on a checked suite from `RUN/eval/<task>/`.

    Raises:
        RsiHubError: unknown or unchecked suite, no evaluation, a checker version other than
            the one that scored the run, or re-judged verdicts that disagree with the log.
    """
    from rsi_hub.checker import CHECKER_VERSION, check, failure_analysis

    if task not in CHECKED_SUITES:
        raise EvaluationInputError(
            f"failures: {task!r} has no checks to analyse; choose one of "
            f"{', '.join(CHECKED_SUITES)}.",
            field="task",
        )
    record = store.read_suite_dir(run, task)
    scored_by = record.meta.checker_version
    if scored_by != CHECKER_VERSION:
        raise EvaluationError(
            f"{record.folder} was scored by checker {scored_by}, this is checker "
            f"{CHECKER_VERSION}: re-run `rsi-hub eval {run} --suite {task}`.",
            path=record.folder,
        )
    rows = []
    logged_passes = 0
    for _, sample in record.samples(task):
        checks = sample["doc"]["checks"]
        rows.append((checks, check(sample["filtered_resps"][0], checks)))
        logged_passes += int(sample["acc"])
    analysis = failure_analysis(rows)
    if analysis.passed != logged_passes:
        raise EvaluationError(
            f"{record.folder}: the checker now passes {analysis.passed} answers where the log "
            f"says {logged_passes}; re-run `rsi-hub eval {run} --suite {task}`.",
            path=record.folder,
        )
    return FailureReport(str(run), task, analysis, CHECKER_VERSION, record.meta.limit)
