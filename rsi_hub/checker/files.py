"""Reading JSONL files of responses to judge (for `rsi-hub check` and other callers).

Two layouts:

- one file whose rows hold `id`, `response` and `checks`;
- a suite file (rows: `id`, `checks`, and usually `prompt`, `category`) joined on `id` with a
  responses file (rows: `id`, `response`). Every response must belong to a suite row and every
  suite row must have a response.

Ids are strings or integers; they are compared as text, so `7` and `"7"` are the same id.
Blank lines are allowed (they hold no row). Anything else that is not a valid row stops the
read with a `RowError` naming the file, the line and the field: nothing is skipped.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rsi_hub.checker.core import CheckError, validate_checks


class RowError(ValueError):
    """A bad row: the message reads `FILE:LINE: FIELD: what is wrong`."""

    def __init__(self, path: str | Path, line: int, field: str | None, problem: str) -> None:
        where = f"{path}:{line}" if line else f"{path}"
        super().__init__(f"{where}: {field}: {problem}" if field else f"{where}: {problem}")
        self.path = str(path)
        self.line = line
        self.field = field


@dataclass(frozen=True, slots=True)
class JudgeRow:
    """One response to judge: its id, text and constraints, and where it came from."""

    id: str
    response: str
    checks: list[dict[str, Any]]
    source: str


def _rows(path: str | Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, object) for every non-blank line of a JSONL file."""
    try:
        f = open(path, encoding="utf-8")  # noqa: SIM115 - closed by the with below
    except OSError as err:
        raise RowError(path, 0, None, f"cannot read the file ({err.strerror or err})") from err
    with f:
        try:
            for lineno, line in enumerate(f, 1):
                if not line.strip():
                    continue
                try:
                    obj = json.loads(line.rstrip("\r\n"))
                except json.JSONDecodeError as err:
                    problem = f"invalid JSON ({err.msg} at column {err.colno})"
                    raise RowError(path, lineno, None, problem) from err
                except ValueError as err:  # e.g. an integer literal too long to convert
                    raise RowError(path, lineno, None, f"invalid JSON ({err})") from err
                if not isinstance(obj, dict):
                    raise RowError(
                        path, lineno, None, f"expected a JSON object, got {type(obj).__name__}"
                    )
                yield lineno, obj
        except UnicodeDecodeError as err:
            raise RowError(path, 0, None, f"not UTF-8 text ({err.reason})") from err


def _id(path: str | Path, lineno: int, obj: dict[str, Any]) -> str:
    if "id" not in obj:
        raise RowError(path, lineno, "id", "missing; every row needs an id")
    v = obj["id"]
    if type(v) not in (str, int) or v == "":
        raise RowError(path, lineno, "id", f"must be a non-empty string or an integer, got {v!r}")
    return str(v)


def _response(path: str | Path, lineno: int, obj: dict[str, Any], hint: str = "") -> str:
    if "response" not in obj:
        raise RowError(path, lineno, "response", "missing" + hint)
    v = obj["response"]
    if not isinstance(v, str):
        raise RowError(path, lineno, "response", f"must be a string, got {type(v).__name__}")
    return v


def _checks(path: str | Path, lineno: int, obj: dict[str, Any]) -> list[dict[str, Any]]:
    if "checks" not in obj:
        raise RowError(path, lineno, "checks", "missing; give a list of constraint objects")
    checks = obj["checks"]
    try:
        validate_checks(checks)
    except CheckError as err:
        field = f"checks[{err.index}]" if err.index >= 0 else "checks"
        raise RowError(path, lineno, field, str(err)) from err
    return checks


def _unique(path: str | Path, lineno: int, rid: str, seen: dict[str, int]) -> None:
    if rid in seen:
        raise RowError(path, lineno, "id", f"duplicate id {rid!r} (first on line {seen[rid]})")
    seen[rid] = lineno


def load_judge_rows(path: str | Path, responses: str | Path | None = None) -> list[JudgeRow]:
    """Read and validate every row (see module docstring); raise `RowError` at the first bad one.

    Without `responses`, `path` holds id/response/checks rows. With it, `path` is a suite file
    (id/checks rows) and `responses` holds id/response rows, joined on id, in suite order.
    """
    if responses is None:
        rows: list[JudgeRow] = []
        seen: dict[str, int] = {}
        hint = "; or pass --responses R.jsonl to join a suite file with a responses file"
        for lineno, obj in _rows(path):
            rid = _id(path, lineno, obj)
            _unique(path, lineno, rid, seen)
            text = _response(path, lineno, obj, hint)
            rows.append(JudgeRow(rid, text, _checks(path, lineno, obj), f"{path}:{lineno}"))
        return rows

    suite: dict[str, tuple[int, list[dict[str, Any]]]] = {}
    seen = {}
    for lineno, obj in _rows(path):
        rid = _id(path, lineno, obj)
        _unique(path, lineno, rid, seen)
        suite[rid] = (lineno, _checks(path, lineno, obj))
    answers: dict[str, tuple[int, str]] = {}
    seen = {}
    for lineno, obj in _rows(responses):
        rid = _id(responses, lineno, obj)
        _unique(responses, lineno, rid, seen)
        if rid not in suite:
            raise RowError(responses, lineno, "id", f"{rid!r} is not an id of the suite {path}")
        answers[rid] = (lineno, _response(responses, lineno, obj))
    out = []
    for rid, (lineno, checks) in suite.items():
        if rid not in answers:
            raise RowError(path, lineno, "id", f"{rid!r} has no response in {responses}")
        rline, text = answers[rid]
        out.append(JudgeRow(rid, text, checks, f"{responses}:{rline}"))
    return out
