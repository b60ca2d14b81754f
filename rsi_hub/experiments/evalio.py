"""The one place `rsi_hub.experiments` touches `rsi_hub.evaluate`.

Experiments never re-implement evaluation, the results layout, the document pairing, the
paired tests, the acceptance guards or the failure analysis: they call the evaluate package's own
functions through the thin wrappers below, so that a change of format or statistic there reaches
every table here. The runner (which brings lm-eval's machinery when it runs) is imported when an
evaluation is run; the readers are light. The weights hash is not evaluate's: it is `rsi_hub.hashing.weights_sha256`, used directly.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rsi_hub.errors import ExperimentInputError
from rsi_hub.evaluate import compare as eval_compare
from rsi_hub.evaluate import failures, protocol, stats, store
from rsi_hub.rundir import EvalMeta

Outcomes = dict[str, bool]
"""Per-document pass/fail of one run on one suite, keyed as `rsi-hub compare` pairs them."""


def aligned_keys(a: Mapping[str, bool], b: Mapping[str, bool]) -> list[str]:
    """The document keys of two outcome maps, refusing maps over different documents.

    Paired tests are only valid on the same items: a missing document is an evaluation that did
    not finish or used another suite file, never something to drop silently in a search.
    """
    if set(a) != set(b):
        first = sorted(set(a) ^ set(b))[0]
        raise ExperimentInputError(
            f"the two evaluations cover different items (first difference: {first}; "
            f"{len(a)} against {len(b)} items): re-run both on the same suite."
        )
    return sorted(a)


def mcnemar_p(incumbent: Outcomes, candidate: Outcomes) -> float:
    """Two-sided exact McNemar p of two runs on the same documents (evaluate's statistic)."""
    keys = aligned_keys(incumbent, candidate)
    counts = stats.paired_counts([incumbent[k] for k in keys], [candidate[k] for k in keys])
    return float(stats.mcnemar_exact_p(counts.a_only, counts.b_only))


@dataclass(frozen=True)
class SuiteResult:
    """What experiments read of one `RUN/eval/<folder>/`."""

    run: Path
    suite: str
    score: float
    n: int
    outcomes: Outcomes
    meta: EvalMeta

    @property
    def weights_sha256(self) -> str | None:
        """The weights the results were scored on."""
        return self.meta.weights_sha256

    @property
    def passes(self) -> int:
        """Documents passed (the paired metric)."""
        return sum(self.outcomes.values())


def _suite(suite: str) -> Any:
    suites = protocol.SUITES
    if suite not in suites:
        raise ExperimentInputError(
            f"unknown suite {suite!r}; choose one of {', '.join(suites)}.", field="suite"
        )
    return suites[suite]


def read_suite(run: str | Path, suite: str, *, folder_name: str | None = None) -> SuiteResult:
    """Score and per-document outcomes of `RUN/eval/<folder_name or suite>/`.

    `suite` names the protocol (which metric is paired and reported); `folder_name` lets a
    prompt-search evaluation live beside the served one. Documents are keyed by compare's own
    pairing (`compare.load_paired_log`).
    """
    spec = _suite(suite)
    folder = folder_name or suite
    logged, meta = eval_compare.load_paired_log(run, dataclasses.replace(spec, name=folder))
    outcomes = {key: entry.passed for key, entry in logged.items()}
    record = store.read_suite_dir(run, folder)
    score: float = float(sum(outcomes.values()))
    for task in spec.tasks:
        value = record.metrics(task).get(spec.score_metric)
        if isinstance(value, int | float):
            score = float(value)
            break
    return SuiteResult(Path(run), suite, score, len(outcomes), outcomes, meta)


def has_suite(run: str | Path, folder_name: str) -> bool:
    """True when `RUN/eval/<folder_name>/` holds a finished evaluation."""
    return bool(store.has_suite_dir(run, folder_name))


def compare(incumbent: str | Path, candidate: str | Path, suite: str = "if818") -> Any:
    """`rsi-hub compare`: paired McNemar, bootstrap CI, guards and the acceptance verdict."""
    return eval_compare.compare_runs(incumbent, candidate, task=suite)


@dataclass(frozen=True)
class GuardStatus:
    """One guard of the acceptance rule read for one run."""

    label: str
    suite: str
    threshold: float
    value: float | None
    status: str  # ok, fail or missing
    note: str


def guards(run: str | Path) -> list[GuardStatus]:
    """The acceptance rule's guards (IF263, MMLU, EV4, PREF) as evaluate reads them for `run`."""
    weights = None
    if has_suite(run, "if818"):
        weights = store.read_suite_dir(run, "if818").meta.weights_sha256
    out = []
    for guard in eval_compare.AcceptanceRule().guards:
        result = eval_compare.read_guard(run, guard, weights)
        out.append(
            GuardStatus(
                result.label,
                guard.suite,
                result.threshold,
                result.value,
                result.status,
                result.note,
            )
        )
    return out


def failure_counts(run: str | Path, suite: str = "if818") -> dict[str, tuple[int, int]]:
    """Per check type: (prompts carrying it, prompts failing it), from the checker's analysis."""
    report = failures.failure_report(run, suite)
    return {t: (c.carrying, c.failing) for t, c in report.analysis.by_type.items()}


def evaluate_with_system_prompt(
    run: Path,
    suite: str,
    candidate: Any,
    folder_name: str,
    *,
    progress: Callable[[str], None] | None = None,
    **options: Any,
) -> None:
    """Evaluate `run` on `suite` with `candidate.text` as the system message (empty: none).

    Results go to `RUN/eval/<folder_name>/`, beside the served `RUN/eval/<suite>/`, through
    evaluate's own runner, so a candidate is scored exactly like the served prompt except for
    the system message (meta.json says `served_configuration: false`). `options` are further
    `EvalConfig` fields (`limit`, `backend`, `batch_size`, ...).
    """
    from rsi_hub.evaluate.config import EvalConfig
    from rsi_hub.evaluate.runner import evaluate_run  # at run time: the runner's imports are heavy

    config = EvalConfig(
        run=run,
        suite=suite,
        system_prompt=candidate.text,
        system_prompt_id=candidate.id,
        folder_name=folder_name,
        **options,
    )
    evaluate_run(config, progress=progress)
