"""The one place `rsi_hub.experiments` touches `rsi_hub.evaluate`.

Experiments never re-implement evaluation, the weights hash, the results layout or the paired
tests: they call the evaluate package's own functions through the thin wrappers below, so that a
change of format or statistic there reaches every table here. Each wrapper imports lazily, so
that the soup and the sweep work in a checkout without the eval extra.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rsi_hub.errors import RsiHubError

Outcomes = dict[str, bool]
"""Per-item pass/fail of one run on one suite, keyed by a stable item key."""


class EvaluateUnavailableError(RsiHubError):
    """`rsi_hub.evaluate` is not importable here (install the eval extra / merge evalh)."""


def _import(module: str) -> Any:
    import importlib

    try:
        return importlib.import_module(f"rsi_hub.evaluate.{module}")
    except ImportError as err:
        raise EvaluateUnavailableError(
            f"this needs rsi_hub.evaluate.{module} (rsi-hub eval / compare), which this "
            f"checkout cannot import: {err}"
        ) from err


def weights_sha256(folder: str | Path) -> str:
    """The sha256 that binds evaluation results to a set of weights (evaluate's definition)."""
    try:
        return _import("provenance").weights_sha256(folder)
    except EvaluateUnavailableError:
        # TEMPORARY until the evalh branch is merged: evaluate's definition, the sha256 of the
        # `sha256sum model*.safetensors` manifest. Deleted at merge: one definition of the hash.
        lines = []
        for path in sorted(Path(folder).glob("model*.safetensors")):
            digest = hashlib.sha256()
            with path.open("rb") as handle:
                while chunk := handle.read(1 << 23):
                    digest.update(chunk)
            lines.append(f"{digest.hexdigest()}  {path.name}\n")
        return hashlib.sha256("".join(lines).encode()).hexdigest()


def mcnemar_p(incumbent: Outcomes, candidate: Outcomes) -> float:
    """Two-sided exact McNemar p of two runs on the same items (evaluate's implementation)."""
    stats = _import("stats")
    keys = aligned_keys(incumbent, candidate)
    counts = stats.paired_counts([incumbent[k] for k in keys], [candidate[k] for k in keys])
    return float(stats.mcnemar_exact_p(counts.a_only, counts.b_only))


def aligned_keys(a: Mapping[str, bool], b: Mapping[str, bool]) -> list[str]:
    """The common item keys of two outcome maps, refusing maps over different items.

    Paired tests are only valid on the same items: a missing item is an evaluation that did not
    finish or used another suite file, never something to drop silently.
    """
    if set(a) != set(b):
        first = sorted(set(a) ^ set(b))[0]
        raise RsiHubError(
            f"the two evaluations cover different items (first difference: {first}; "
            f"{len(a)} against {len(b)} items): re-run both on the same suite."
        )
    return sorted(a)


@dataclass(frozen=True)
class SuiteResult:
    """What experiments read of one `RUN/eval/<suite>/` folder."""

    run: Path
    suite: str
    score: float
    n: int
    outcomes: Outcomes
    weights_sha256: str | None
    system_prompt_id: str | None
    meta: dict[str, Any]


def _item_key(task: str, sample: Mapping[str, Any]) -> str:
    # doc_hash identifies the document itself; doc_id is its position, kept for old logs.
    return f"{task}:{sample.get('doc_hash') or sample['doc_id']}"


def read_suite(run: str | Path, suite: str, *, folder_name: str | None = None) -> SuiteResult:
    """Read the score and per-item outcomes of `RUN/eval/<folder_name or suite>/`.

    `suite` names the protocol (which metric is paired); `folder_name` lets a prompt-search
    evaluation live beside the served one.
    """
    store, protocol = _import("store"), _import("protocol")
    spec = protocol.SUITES[suite]
    record = store.read_suite_dir(run, folder_name or suite)
    outcomes = {
        _item_key(task, sample): bool(sample[spec.paired_metric])
        for task, sample in record.samples()
    }
    score = _score(record, spec, outcomes)
    meta = record.meta
    return SuiteResult(
        run=Path(run),
        suite=suite,
        score=score,
        n=len(outcomes),
        outcomes=outcomes,
        weights_sha256=meta.get("weights_sha256"),
        system_prompt_id=meta.get("system_prompt_id"),
        meta=dict(meta),
    )


def _score(record: Any, spec: Any, outcomes: Outcomes) -> float:
    for task in spec.tasks:
        try:
            value = record.metrics(task).get(spec.score_metric)
        except RsiHubError:
            continue
        if value is not None:
            return float(value)
    # Fall back to the per-item pass count the paired test uses.
    return float(sum(outcomes.values()))


def has_suite(run: str | Path, folder_name: str) -> bool:
    """True when `RUN/eval/<folder_name>/` holds a finished evaluation."""
    return bool(_import("store").has_suite_dir(run, folder_name))


def suite_names() -> list[str]:
    """The suites `rsi-hub eval --suite` knows."""
    return list(_import("protocol").SUITES)


def evaluate_with_system_prompt(run: Path, suite: str, candidate: Any, folder_name: str) -> None:
    """Evaluate `run` on `suite` with `candidate.text` as the system message (empty: none).

    Results go to `RUN/eval/<folder_name>/`, beside the served `RUN/eval/<suite>/`, through
    evaluate's own runner, so a candidate is scored exactly like the served prompt except for
    the system message.

    Raises:
        EvaluateUnavailableError: this checkout's evaluate runner cannot set the system prompt.
    """
    runner = _import("runner")
    try:
        runner.evaluate_run(
            run,
            suite,
            system_prompt=candidate.text,
            system_prompt_id=candidate.id,
            folder_name=folder_name,
        )
    except TypeError as err:
        if "unexpected keyword" not in str(err):
            raise
        raise EvaluateUnavailableError(
            "rsi_hub.evaluate.runner.evaluate_run cannot take a candidate system prompt yet "
            "(needs system_prompt=, system_prompt_id=, folder_name=): "
            f"{err}"
        ) from err
