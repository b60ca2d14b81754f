"""Parameter kinds of the check types: one validator per kind.

Each validator returns None when a value is acceptable, else the phrase that completes
"parameter X must be ..." in a `CheckError` (called with `MISSING`, it returns that phrase,
which the "missing parameter" message uses). Counts are JSON integers: `true`, `50.0` and
`"50"` are mistakes, not 50.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

#: Stands for an absent parameter.
MISSING: Any = object()


def _int_ge0(v: Any) -> str | None:
    # bool is an int subclass in Python; `true` for a count is a mistake, not 1.
    if type(v) is int and v >= 0:
        return None
    return "a whole number >= 0"


def _number(v: Any) -> str | None:
    # An int of any size is a number (math.isfinite would raise OverflowError past 1e308).
    if type(v) is int or (type(v) is float and math.isfinite(v)):
        return None
    return "a finite number"


def _number_ge0(v: Any) -> str | None:
    if _number(v) is None and v >= 0:
        return None
    return "a finite number >= 0"


def _bool(v: Any) -> str | None:
    return None if type(v) is bool else "true or false"


def _str(v: Any) -> str | None:
    return None if type(v) is str else "a string"


def _word(v: Any) -> str | None:
    # A word match needs something to match: a blank word has no boundaries to test.
    if type(v) is str and v.strip():
        return None
    return "a non-blank string"


def _char(v: Any) -> str | None:
    if type(v) is str and len(v) == 1:
        return None
    return "a string of exactly one character"


def _str_list_or_empty(v: Any) -> str | None:
    if type(v) is list and all(type(x) is str for x in v):
        return None
    return "a list of strings"


def _str_list(v: Any) -> str | None:
    if type(v) is list and v and all(type(x) is str for x in v):
        return None
    return "a non-empty list of strings"


def _letter(v: Any) -> str | None:
    # Spec 1.1: one capital A-Z, nothing else. Case-folding is refused outright because
    # `"ß".upper()` is "SS" and `"ı".upper()` is "I", which are no option letters.
    if type(v) is str and len(v) == 1 and "A" <= v <= "Z":
        return None
    return "a single option letter A-Z (a capital)"


def _identifier(v: Any) -> str | None:
    if type(v) is str and v.isidentifier():
        return None
    return "a Python identifier (the function to test)"


def _tests(v: Any) -> str | None:
    if type(v) is str and v.strip():
        return None
    if type(v) is list and v and all(type(x) is str and x.strip() for x in v):
        return None
    return "Python test code: a non-blank string or a non-empty list of strings"


def _args(v: Any) -> str | None:
    if type(v) is list and all(type(x) is str for x in v):
        return None
    if type(v) is dict:
        return None
    return "a list of argument names, or an object of argument name -> expected value"


def _timeout(v: Any) -> str | None:
    if type(v) in (int, float) and 0 < v <= 60:
        return None
    return "a number of seconds > 0 and <= 60"


def _pattern(v: Any) -> str | None:
    if type(v) is not str:
        return "a regular expression string"
    # Imported here so that loading the parameter kinds does not load RE2.
    from rsi_hub.checker.re2_patterns import pattern_problem

    return pattern_problem(v)


def _plain_json(v: Any, depth: int = 0) -> bool:
    """Whether `v` is plain JSON: exact dict (str keys), list, str, int, finite float, bool, null."""
    t = type(v)
    if depth > 100:
        return False
    if v is None or t in (bool, int, str):
        return True
    if t is float:
        return math.isfinite(v)
    if t is list:
        return all(_plain_json(x, depth + 1) for x in v)
    if t is dict:
        return all(type(k) is str and _plain_json(x, depth + 1) for k, x in v.items())
    return False


_CASES = (
    'a non-empty list of cases {"args": [...], "kwargs": {...}, "expect": ...} '
    "(plain JSON values; args and kwargs optional)"
)


def _cases(v: Any) -> str | None:
    if type(v) is not list or not v:
        return _CASES
    for case in v:
        if (
            type(case) is not dict
            or "expect" not in case
            or set(case) - {"args", "kwargs", "expect"}
        ):
            return _CASES
        args, kwargs = case.get("args", []), case.get("kwargs", {})
        if type(args) is not list or type(kwargs) is not dict:
            return _CASES
        if not all(type(k) is str and k.isidentifier() for k in kwargs):
            return _CASES
        if not _plain_json([args, kwargs, case["expect"]]):
            return _CASES
    return None


KINDS: dict[str, Callable[[Any], str | None]] = {
    "int_ge0": _int_ge0,
    "number": _number,
    "number_ge0": _number_ge0,
    "bool": _bool,
    "str": _str,
    "word": _word,
    "char": _char,
    "str_list": _str_list,
    "str_list_or_empty": _str_list_or_empty,
    "letter": _letter,
    "identifier": _identifier,
    "tests": _tests,
    "args": _args,
    "timeout": _timeout,
    "pattern": _pattern,
    "cases": _cases,
}
