"""`rsi-hub compare`: two runs on the same documents, paired statistics and the acceptance rule.

Card sections 3 and 4: only differences confirmed by a paired test on the same items count.
A candidate B is accepted over an incumbent A when (i) none of B's guards regresses
(IF263 >= 193, MMLU >= 0.71, EV4 >= 104, PREF >= 0.618, each from a full run of B) and (ii) B
shows a paired-significant gain on the primary suite (exact McNemar p < alpha, B-only wins
outnumbering A-only wins).

A guard may instead be relative to the incumbent, as the card's own thresholds are A's scores
(IF263 193 and EV4 104 are LA2b200s's): with `max_drop`, B must score at least A's full,
served-configuration result minus `max_drop`; where A has no such result (an untrained init), the
absolute `threshold` applies. A guards file (`release/<name>/guards.yaml`, `load_guard_rule`)
states a scale's guards, thresholds and reasons.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

import yaml

from rsi_hub.errors import EvaluationFileError, EvaluationInputError
from rsi_hub.evaluate import stats, store
from rsi_hub.evaluate.protocol import SUITES, Suite
from rsi_hub.rundir import EvalMeta


class DocumentMismatchError(EvaluationInputError):
    """The two runs were scored on different documents under the same id."""


@dataclass(frozen=True)
class Guard:
    """A guard of the acceptance rule: `metric` of `task` in `RUN/eval/<suite>/` >= threshold.

    With `max_drop`, the threshold is the incumbent's own value minus `max_drop` whenever the
    incumbent has a usable result of this guard, and `threshold` otherwise.
    """

    label: str
    suite: str
    task: str
    metric: str
    threshold: float
    max_drop: float | None = None


DEFAULT_GUARDS: tuple[Guard, ...] = (
    Guard("IF263", "if263", "if263", "pass_count", 193),
    Guard("MMLU", "mmlu", "mmlu", "acc", 0.71),
    Guard("EV4", "ev4", "ev4", "checks_passed", 104),
    Guard("PREF", "pref", "pref", "acc_norm", 0.618),
)


@dataclass(frozen=True)
class AcceptanceRule:
    """The card's acceptance rule; thresholds and alpha are configurable."""

    guards: tuple[Guard, ...] = DEFAULT_GUARDS
    alpha: float = 0.05

    def with_thresholds(self, thresholds: dict[str, float]) -> AcceptanceRule:
        """A copy with some guard thresholds replaced (keys: guard label or suite, any case)."""
        wanted = {key.lower(): value for key, value in thresholds.items()}
        known = {g.label.lower() for g in self.guards} | {g.suite for g in self.guards}
        unknown = sorted(set(wanted) - known)
        if unknown:
            raise EvaluationInputError(
                f"unknown guard {', '.join(unknown)}; guards are "
                f"{', '.join(g.suite for g in self.guards)}",
                field="guards",
            )
        guards = []
        for g in self.guards:
            value = wanted.get(g.label.lower(), wanted.get(g.suite))
            guards.append(g if value is None else replace(g, threshold=value, max_drop=None))
        return AcceptanceRule(tuple(guards), self.alpha)


def load_guard_rule(path: str | Path) -> AcceptanceRule:
    """The acceptance rule a guards file states (`release/<name>/guards.yaml`).

    The file holds `alpha` and a list `guards` of `{label, suite, metric, threshold, max_drop,
    why}`; `task` defaults to the suite, `max_drop` to none (an absolute threshold) and `why`,
    the justification the card quotes, is required.

    Raises:
        EvaluationInputError: the file is missing or malformed (names the file and the field).
    """
    path = Path(path)
    if not path.is_file():
        raise EvaluationInputError(f"{path}: no guards file; pass an existing one.", field="guards")
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as err:
        raise EvaluationInputError(f"{path}: not valid YAML ({err}); fix it.") from err
    raw = data.get("guards") if isinstance(data, dict) else None
    if not isinstance(raw, list) or not raw:
        raise EvaluationInputError(f"{path}: needs a non-empty list `guards`.", field="guards")
    guards = []
    for entry in raw:
        try:
            suite = str(entry["suite"])
            max_drop = entry.get("max_drop")
            guard = Guard(
                str(entry["label"]), suite, str(entry.get("task", suite)), str(entry["metric"]),
                float(entry["threshold"]), None if max_drop is None else float(max_drop),
            )  # fmt: skip
            if not str(entry.get("why", "")).strip():
                raise KeyError("why")
        except (KeyError, TypeError, ValueError, AttributeError) as err:
            raise EvaluationInputError(
                f"{path}: guard {entry!r:.80} lacks or mistypes {err}; each guard needs label, "
                "suite, metric, threshold (a number) and why (the justification).",
                field="guards",
            ) from None
        if suite not in SUITES:
            raise EvaluationInputError(
                f"{path}: guard {guard.label}: unknown suite {suite!r}; choose one of "
                f"{', '.join(SUITES)}.",
                field="guards",
            )
        guards.append(guard)
    return AcceptanceRule(tuple(guards), float(data.get("alpha", 0.05)))


@dataclass(frozen=True)
class GuardResult:
    """One guard as read from the candidate's results."""

    label: str
    threshold: float
    value: float | None
    status: str  # "ok", "fail" or "missing"
    note: str = ""


@dataclass
class Comparison:
    """The paired comparison of two runs on one suite and the acceptance verdict."""

    task: str
    run_a: str
    run_b: str
    n: int
    a: int
    b: int
    a_only: int
    b_only: int
    mcnemar_p: float
    ci95: tuple[float, float]
    unmatched_a: int
    unmatched_b: int
    prompts_differ: int
    guards: list[GuardResult] = field(default_factory=list)
    #: Set when B is scored under another protocol than A (verify-and-revise): what differs.
    protocols_differ: str | None = None
    verdict: str = ""
    accepted: bool | None = None
    warnings: list[str] = field(default_factory=list)  # e.g. a run compared with itself

    def to_json(self) -> dict[str, Any]:
        """JSON-ready dict; `a`, `b` are pass counts on the `n` paired documents, `ci95` the
        bootstrap 95 % interval of B - A in percentage points."""
        data = asdict(self)
        data["ci95"] = list(self.ci95)
        return data


@dataclass(frozen=True)
class _Logged:
    doc_hash: str
    prompt_hash: str
    passed: bool


def _doc_key(task: str, sample: dict[str, Any]) -> str:
    doc = sample.get("doc") or {}
    ident = doc.get("id") if isinstance(doc, dict) and doc.get("id") is not None else None
    return f"{task}:{ident if ident is not None else sample['doc_id']}"


def load_paired_log(
    run: str | Path, suite: Suite, folder: str | None = None
) -> tuple[dict[str, _Logged], EvalMeta]:
    """Per-document outcomes of one run on one suite, keyed by task and document id; and meta.

    `folder` reads `RUN/eval/<folder>/` instead of `RUN/eval/<suite>/` (e.g. a revise eval).
    """
    record = store.read_suite_dir(run, folder or suite.name)
    logged: dict[str, _Logged] = {}
    for task, sample in record.samples():
        if suite.paired_metric not in sample:
            raise EvaluationFileError(
                f"{record.folder}: samples of {task} lack the metric {suite.paired_metric!r}",
                path=record.folder,
            )
        key = _doc_key(task, sample)
        logged[key] = _Logged(
            sample["doc_hash"], sample.get("prompt_hash", ""), bool(sample[suite.paired_metric])
        )
    if not logged:
        raise EvaluationFileError(
            f"{record.folder}: no per-document samples logged", path=record.folder
        )
    return logged, record.meta


def _same_protocol(meta_a: EvalMeta, meta_b: EvalMeta, task: str) -> None:
    # What changes the meaning of a pass must match, or the pairing compares different tests.
    for key, what in (
        ("checker_version", "checker version"),
        ("system_prompt_id", "system prompt"),
        ("generation", "generation settings"),
    ):
        a, b = getattr(meta_a, key), getattr(meta_b, key)
        if a != b:
            raise EvaluationInputError(
                f"{task}: the runs differ in {what} ({a!r} vs {b!r}); "
                "re-run `rsi-hub eval` on both so that they are scored alike.",
                field=key,
            )


def read_guard(run: str | Path, guard: Guard, weights: str | None) -> GuardResult:
    """Read one guard from `RUN/eval/<suite>/`: missing unless a full, served-configuration run
    of the same weights."""
    if not store.has_suite_dir(run, guard.suite):
        return GuardResult(guard.label, guard.threshold, None, "missing", "not evaluated")
    record = store.read_suite_dir(run, guard.suite)
    meta = record.meta
    if meta.limit is not None:
        return GuardResult(
            guard.label, guard.threshold, None, "missing", f"ran with --limit {meta.limit}"
        )
    if meta.served_configuration is False:
        return GuardResult(guard.label, guard.threshold, None, "missing", "not served settings")
    if weights is not None and meta.weights_sha256 not in (None, weights):
        return GuardResult(
            guard.label, guard.threshold, None, "missing", "scored other weights than the primary"
        )
    value = record.metrics(guard.task).get(guard.metric)
    if not isinstance(value, int | float):
        return GuardResult(guard.label, guard.threshold, None, "missing", f"no {guard.metric}")
    status = "ok" if value >= guard.threshold else "fail"
    return GuardResult(guard.label, guard.threshold, float(value), status)


def _effective(guard: Guard, run_a: str | Path, weights_a: str | None) -> Guard:
    """`guard` with the threshold it has for incumbent A: A's value minus `max_drop` when A has
    a usable result of it, else its absolute threshold."""
    if guard.max_drop is None:
        return guard
    incumbent = read_guard(run_a, guard, weights_a)
    if incumbent.value is None:
        return guard
    return replace(guard, threshold=incumbent.value - guard.max_drop)


def _guard_of(
    run_b: str | Path, weights_b: str | None, guard: Guard, run_a: str | Path, meta_a: EvalMeta
) -> GuardResult:
    """B's result of `guard`, at the threshold it has against incumbent A (noted when relative)."""
    effective = _effective(guard, run_a, meta_a.weights_sha256)
    result = read_guard(run_b, effective, weights_b)
    if effective is guard or guard.max_drop is None:
        return result
    why = f"A's {effective.threshold + guard.max_drop:g} - {guard.max_drop:g}"
    return replace(result, note=f"{result.note}; {why}" if result.note else why)


def _points(x: float) -> str:
    return f"{x:+.2f}"


def decide(comparison: Comparison, rule: AcceptanceRule, primary_limited: bool) -> None:
    """Fill `verdict` (one line) and `accepted` (None when it cannot be decided)."""
    c = comparison
    failed = [g for g in c.guards if g.status == "fail"]
    missing = [g for g in c.guards if g.status == "missing"]
    gain = c.b_only - c.a_only
    significant = stats.gain_is_significant(c.a_only, c.b_only, rule.alpha)
    if failed:
        listed = "; ".join(f"{g.label} {g.value:g} < {g.threshold:g}" for g in failed)
        c.accepted = False
        c.verdict = f"REJECT: B breaks guard(s) {listed}"
        return
    if missing:
        listed = ", ".join(f"{g.label} ({g.note})" for g in missing)
        suites = " ".join(sorted({g.label.lower() for g in missing}))
        c.accepted = None
        c.verdict = (
            f"INCOMPLETE: no usable guard result for {listed} in {c.run_b}; "
            f"run `rsi-hub eval {c.run_b} --suite SUITE` for: {suites}"
        )
        return
    if primary_limited:
        c.accepted = None
        c.verdict = f"INCOMPLETE: {c.task} was scored with --limit; evaluate the full suite"
        return
    ci = f"95 % CI [{_points(c.ci95[0])}, {_points(c.ci95[1])}] points"
    if significant:
        c.accepted = True
        c.verdict = (
            f"ACCEPT: B gains {gain:+d} on {c.task} (exact McNemar p = {c.mcnemar_p:.3g}, {ci}) "
            "and keeps every guard"
        )
    else:
        c.accepted = False
        why = "no gain" if gain <= 0 else f"p = {c.mcnemar_p:.3g} >= {rule.alpha:g}"
        c.verdict = (
            f"REJECT: no paired-significant gain of B on {c.task} ({gain:+d}, {why}, {ci}); "
            "guards hold"
        )


def _same_model_warnings(
    run_a: str | Path, run_b: str | Path, weights_a: str | None, weights_b: str | None
) -> list[str]:
    """Why this comparison cannot show a difference: one folder twice, or the same weights."""
    if Path(run_a).resolve() == Path(run_b).resolve():
        return [
            f"RUN_A and RUN_B are the same folder ({run_a}): a run compared with itself; "
            "pass the incumbent and the candidate."
        ]
    if weights_a and weights_a == weights_b:
        return [
            f"RUN_A and RUN_B were scored on the same weights (sha256 {weights_a[:12]}…): "
            "any difference is decoding noise, not a better model."
        ]
    return []


def compare_runs(
    run_a: str | Path,
    run_b: str | Path,
    *,
    task: str = "if818",
    rule: AcceptanceRule | None = None,
    bootstrap_iters: int = 10_000,
    seed: int = 0,
    revise_b: int | None = None,
) -> Comparison:
    """Compare incumbent A and candidate B on one suite and apply the acceptance rule.

    Documents are joined on task and document id; documents only one run scored (e.g. under
    different --limit) are left out and counted.

    With `revise_b=K`, B is RUN_B's verify-and-revise evaluation (`RUN_B/eval/<task>.revise-K/`)
    paired against A's plain served one of the same weights: not a model comparison, so no
    guards and no acceptance verdict; `protocols_differ` says what differs.

    Raises:
        DocumentMismatchError: a document id carries different content in the two runs.
        RsiHubError: a run lacks `RUN/eval/<task>/`, the runs share no document, or they were
            scored with different checker versions, system prompts or generation settings.
    """
    if task not in SUITES:
        raise EvaluationInputError(
            f"unknown task {task!r}; choose one of {', '.join(SUITES)}", field="task"
        )
    suite = SUITES[task]
    rule = rule or AcceptanceRule()
    log_a, meta_a = load_paired_log(run_a, suite)
    folder_b = None
    if revise_b is not None:
        from rsi_hub.evaluate.revise_eval import revise_folder

        folder_b = revise_folder(task, revise_b)
        if not store.has_suite_dir(run_b, folder_b):
            raise EvaluationFileError(
                f"{store.suite_dir(run_b, folder_b)} not found: run `rsi-hub eval {run_b} "
                f"--suite {task} --revise {revise_b}` first.",
                path=store.suite_dir(run_b, folder_b),
            )
    log_b, meta_b = load_paired_log(run_b, suite, folder_b)
    if revise_b is None:
        _same_protocol(meta_a, meta_b, task)
    else:
        _revise_against_plain(meta_a, meta_b, task)

    shared = sorted(set(log_a) & set(log_b))
    if not shared:
        raise EvaluationInputError(f"{task}: the two runs share no document id; nothing to pair.")
    differing = [key for key in shared if log_a[key].doc_hash != log_b[key].doc_hash]
    if differing:
        raise DocumentMismatchError(
            f"{task}: {len(differing)} document(s) have the same id but different content "
            f"(doc_hash), first {differing[0]}: the runs were scored on different suite files. "
            "Re-run `rsi-hub eval` on both with the same suite version."
        )
    a = [log_a[key].passed for key in shared]
    b = [log_b[key].passed for key in shared]
    counts = stats.paired_counts(a, b)
    comparison = Comparison(
        task=task,
        run_a=str(run_a),
        run_b=str(run_b),
        n=counts.n,
        a=counts.a_pass,
        b=counts.b_pass,
        a_only=counts.a_only,
        b_only=counts.b_only,
        mcnemar_p=stats.mcnemar_exact_p(counts.a_only, counts.b_only),
        ci95=stats.paired_bootstrap_ci(a, b, iters=bootstrap_iters, seed=seed),
        unmatched_a=len(log_a) - len(shared),
        unmatched_b=len(log_b) - len(shared),
        prompts_differ=sum(log_a[k].prompt_hash != log_b[k].prompt_hash for k in shared),
    )
    weights_b = meta_b.weights_sha256
    limited = meta_a.limit is not None or meta_b.limit is not None
    if revise_b is not None:
        _decide_protocols(comparison, meta_b, rule)
        return comparison
    comparison.warnings = _same_model_warnings(run_a, run_b, meta_a.weights_sha256, weights_b)
    comparison.guards = [_guard_of(run_b, weights_b, g, run_a, meta_a) for g in rule.guards]
    decide(comparison, rule, limited)
    return comparison


def _revise_against_plain(meta_a: EvalMeta, meta_b: EvalMeta, task: str) -> None:
    """A must be plain serving and B verify-and-revise, of the same weights, judged alike."""
    from rsi_hub.evaluate.protocol import REVISE_PROTOCOL

    if meta_b.extra.get("protocol") != REVISE_PROTOCOL:
        raise EvaluationInputError(
            f"{task}: RUN_B's folder is not a verify-and-revise evaluation; run "
            "`rsi-hub eval RUN --revise K` first.",
            field="revise",
        )
    if meta_a.extra.get("protocol") is not None or meta_a.system_prompt_id != (
        meta_b.system_prompt_id
    ):
        raise EvaluationInputError(
            f"{task}: RUN_A/eval/{task}/ must be plain serving in the served configuration "
            f"(system prompt {meta_b.system_prompt_id}); run `rsi-hub eval RUN --suite {task}`.",
            field="revise",
        )
    if meta_a.weights_sha256 != meta_b.weights_sha256:
        raise EvaluationInputError(
            f"{task}: verify-and-revise is paired against plain serving of the same weights, but "
            f"A scored {str(meta_a.weights_sha256)[:12]}… and B {str(meta_b.weights_sha256)[:12]}"
            "…; pass the same run twice (or omit RUN_B).",
            field="revise",
        )
    if meta_a.checker_version != meta_b.checker_version:
        raise EvaluationInputError(
            f"{task}: the runs differ in checker version ({meta_a.checker_version!r} vs "
            f"{meta_b.checker_version!r}); `rsi-hub rescore` the plain one.",
            field="checker_version",
        )


def _decide_protocols(comparison: Comparison, meta_b: EvalMeta, rule: AcceptanceRule) -> None:
    """The verdict of a protocol comparison: the gain is the loop's, never a model's."""
    c = comparison
    rounds = meta_b.extra.get("max_rounds")
    ratio = (meta_b.extra.get("tokens") or {}).get("completion_ratio")
    cost = f", {ratio:.2f}x the generated tokens" if isinstance(ratio, int | float) else ""
    c.protocols_differ = (
        f"A is plain serving (one greedy answer); B is verify-and-revise (up to {rounds} answers "
        f"per prompt{cost}) on the same weights"
    )
    c.warnings = [f"the protocols differ: {c.protocols_differ}; this is not a model comparison."]
    significant = stats.gain_is_significant(c.a_only, c.b_only, rule.alpha)
    gain = c.b_only - c.a_only
    c.accepted = None
    c.verdict = (
        f"PROTOCOLS DIFFER: verify-and-revise {'gains' if gain >= 0 else 'loses'} {gain:+d} on "
        f"{c.task} over plain serving (exact McNemar p = {c.mcnemar_p:.3g}, "
        f"{'significant' if significant else 'not significant'} at {rule.alpha:g}); no "
        "acceptance decision: the weights are the same"
    )


def format_comparison(c: Comparison) -> str:
    """The human-readable report `rsi-hub compare` prints."""
    pct = lambda k: 100.0 * k / c.n  # noqa: E731
    lines = [f"protocols differ: {c.protocols_differ}"] if c.protocols_differ else []
    lines += [
        f"{c.task}: {c.n} paired documents",
        f"  A {c.run_a}: {c.a}/{c.n} ({pct(c.a):.2f} %)",
        f"  B {c.run_b}: {c.b}/{c.n} ({pct(c.b):.2f} %)",
        f"  discordant: A only {c.a_only}, B only {c.b_only}",
        f"  exact McNemar p = {c.mcnemar_p:.4g}",
        f"  B - A = {pct(c.b) - pct(c.a):+.2f} points, bootstrap 95 % CI "
        f"[{c.ci95[0]:+.2f}, {c.ci95[1]:+.2f}]",
    ]
    if c.unmatched_a or c.unmatched_b:
        lines.append(
            f"  left out (scored by one run only): {c.unmatched_a} of A, {c.unmatched_b} of B"
        )
    if c.prompts_differ:
        lines.append(f"  note: {c.prompts_differ} paired prompts were rendered differently")
    if c.guards:
        lines.append("guards (B):")
    for g in c.guards:
        shown = f"{g.value:g}" if g.value is not None else "-"
        note = f" ({g.note})" if g.note else ""
        lines.append(f"  {g.label} >= {g.threshold:g}: {shown} {g.status}{note}")
    lines.append(f"verdict: {c.verdict}")
    return "\n".join(lines)
