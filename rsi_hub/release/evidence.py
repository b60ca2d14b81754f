"""Checking a run's `training_evidence.json` against what its release card states."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rsi_hub.release.facts import EVIDENCE_FILE, Facts
from rsi_hub.rundir import EVIDENCE_FILE as TRAINING_EVIDENCE_FILE
from rsi_hub.rundir import TrainingEvidence

__all__ = ["TRAINING_EVIDENCE_FILE", "evidence_problems"]
_MISSING = object()


def _lookup(data: dict[str, Any], dotted: str) -> Any:
    value: Any = data
    for key in dotted.split("."):
        if not isinstance(value, dict) or key not in value:
            return _MISSING
        value = value[key]
    return value


def _matches(actual: Any, expected: Any) -> bool:
    if isinstance(expected, str) and expected.endswith("…"):
        # The card prints hashes truncated ("7076902b…"): a prefix of the full value.
        return str(actual).startswith(expected[:-1])
    return str(actual) == str(expected)


def evidence_problems(evidence: TrainingEvidence, facts: Facts, where: str | Path) -> list[str]:
    """Every way `evidence` falls short of what `facts` require, one message each (file + fix).

    `facts` name fields by their dotted path in the file (`slurm.state`, `data.dataset_sha256`).
    """
    rules = facts.folder / EVIDENCE_FILE
    data = evidence.to_json()
    problems = []
    for name in facts.evidence_required:
        if _lookup(data, name) in (_MISSING, None, ""):
            problems.append(
                f"{where}: field {name!r} is missing or empty; {rules} requires it (the card "
                "reports it): re-run training with `rsi-hub train`, which records it."
            )
    for name, expected in facts.evidence_expected.items():
        actual = _lookup(data, name)
        if actual is not _MISSING and actual is not None and not _matches(actual, expected):
            problems.append(
                f"{where}: field {name!r} is {actual!r} but the card states {expected!r} "
                f"({rules}): release the run the card describes, or correct the facts."
            )
    return problems
