"""Checking a run's `training_evidence.json` against what its release card states."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from rsi_hub.errors import ReleaseError
from rsi_hub.release.facts import EVIDENCE_FILE, Facts

TRAINING_EVIDENCE_FILE = "training_evidence.json"
_MISSING = object()


def read_evidence(folder: str | Path) -> dict[str, Any]:
    """The `training_evidence.json` of a run or staged release.

    Raises:
        ReleaseError: the file is missing or not a JSON object.
    """
    path = Path(folder) / TRAINING_EVIDENCE_FILE
    if not path.is_file():
        raise ReleaseError(
            f"{path}: missing; every run writes it (`rsi-hub train`, `rsi-hub tiny`): release a "
            "run directory, not a bare checkpoint."
        )
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as err:
        raise ReleaseError(f"{path}: not valid JSON ({err}).") from err
    if not isinstance(data, dict):
        raise ReleaseError(f"{path}: must hold a JSON object.")
    return data


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


def evidence_problems(evidence: dict[str, Any], facts: Facts, where: str | Path) -> list[str]:
    """Every way `evidence` falls short of what `facts` require, one message each (file + fix)."""
    rules = facts.folder / EVIDENCE_FILE
    problems = []
    for name in facts.evidence_required:
        if _lookup(evidence, name) in (_MISSING, None, ""):
            problems.append(
                f"{where}: field {name!r} is missing or empty; {rules} requires it (the card "
                "reports it): re-run training with `rsi-hub train`, which records it."
            )
    for name, expected in facts.evidence_expected.items():
        actual = _lookup(evidence, name)
        if actual is not _MISSING and actual is not None and not _matches(actual, expected):
            problems.append(
                f"{where}: field {name!r} is {actual!r} but the card states {expected!r} "
                f"({rules}): release the run the card describes, or correct the facts."
            )
    return problems
