"""Guarded regular expressions for the `regex` check.

Python's `re` backtracks, so a user pattern can take exponential time. Two layers keep the
`regex` check bounded:

1. Static restriction, enforced when constraints are validated (a violation is a `CheckError`):
   the pattern must compile, be at most `MAX_PATTERN_CHARS` long, use no backreferences
   (`\\1`, `(?P=name)`, `(?(1)...)`), and never repeat a group that itself holds a variable
   repeat or an alternation (`(a+)+`, `(\\w+\\s?)*`, `(a|ab)*`): the shapes behind catastrophic
   backtracking. Write `(?:yes|no)` once, or repeat a character class instead.
2. A time guard at search time: on the main thread the search runs under a `SIGALRM` timer of
   `SEARCH_SECONDS` (the regex engine checks for signals while it runs); a search that exceeds
   it fails the check with the reason "regex search timed out". Off the main thread no timer
   can be set, and only layer 1 applies. Polynomial patterns that pass layer 1 (`.*a.*b` on a
   huge response) are what the timer is for; with responses of normal length it never fires.
"""

from __future__ import annotations

import re
import signal
import threading
import time
from functools import lru_cache

try:  # Python 3.11+
    from re import _constants as _c
    from re import _parser as _p
except ImportError:  # pragma: no cover - Python 3.10 layout
    import sre_constants as _c  # type: ignore[no-redef]
    import sre_parse as _p  # type: ignore[no-redef]

MAX_PATTERN_CHARS = 1000
SEARCH_SECONDS = 1.0

_REPEATS = {_c.MAX_REPEAT, _c.MIN_REPEAT, getattr(_c, "POSSESSIVE_REPEAT", _c.MAX_REPEAT)}
_BACKREFS = {_c.GROUPREF, _c.GROUPREF_EXISTS}


def _children(op: object, av: object) -> list[object]:
    """Sub-pattern lists directly under one parsed node."""
    if op in _REPEATS:
        return [av[2]]  # type: ignore[index]
    if op is _c.SUBPATTERN:
        return [av[3]]  # type: ignore[index]
    if op is _c.BRANCH:
        return list(av[1])  # type: ignore[index]
    if op in (_c.ASSERT, _c.ASSERT_NOT):
        return [av[1]]  # type: ignore[index]
    if op is getattr(_c, "ATOMIC_GROUP", None):
        return [av]
    if op is _c.GROUPREF_EXISTS:
        return [x for x in av[1:] if x is not None]  # type: ignore[index]
    return []


def _risky_inside(seq: object) -> str | None:
    """What, inside a repeated group, makes the repeat ambiguous (None if nothing)."""
    for op, av in seq:  # type: ignore[attr-defined]
        if op in _REPEATS and av[0] != av[1]:
            return "a variable quantifier"
        if op is _c.BRANCH:
            return "an alternation"
        for child in _children(op, av):
            found = _risky_inside(child)
            if found:
                return found
    return None


def _walk(seq: object) -> str | None:
    for op, av in seq:  # type: ignore[attr-defined]
        if op in _BACKREFS:
            return "backreferences are not allowed"
        if op in _REPEATS and av[0] != av[1]:
            inner = _risky_inside(av[2])
            if inner:
                return (
                    f"a repeated group must not contain {inner} (nested repeats can "
                    "backtrack catastrophically); repeat a character class instead"
                )
        for child in _children(op, av):
            found = _walk(child)
            if found:
                return found
    return None


@lru_cache(maxsize=1024)
def pattern_problem(pattern: str) -> str | None:
    """None if `pattern` is acceptable for the `regex` check, else a phrase saying why not."""
    if len(pattern) > MAX_PATTERN_CHARS:
        return f"a regular expression of at most {MAX_PATTERN_CHARS} characters"
    try:
        re.compile(pattern)
        parsed = _p.parse(pattern)
    except (re.error, RecursionError, OverflowError) as err:
        return f"a valid regular expression ({err})"
    try:
        problem = _walk(parsed)
    except RecursionError:
        return "a regular expression nested less deeply"
    return None if problem is None else f"a safe regular expression: {problem}"


class _Timeout(Exception):
    pass


def _alarm(signum: int, frame: object) -> None:
    raise _Timeout


def guarded_search(pattern: str, text: str, seconds: float = SEARCH_SECONDS) -> bool | None:
    """`re.search(pattern, text) is not None`, or None if the search ran past `seconds`.

    The timer only exists on the main thread (see module docstring). Any timer the caller had
    set is restored afterwards, shortened by the time spent here.
    """
    rx = re.compile(pattern)
    if threading.current_thread() is not threading.main_thread():
        return rx.search(text) is not None
    try:
        old_handler = signal.signal(signal.SIGALRM, _alarm)
    except ValueError:  # not the main interpreter
        return rx.search(text) is not None
    start = time.monotonic()
    old_delay, old_interval = signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        try:
            return rx.search(text) is not None
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
    except _Timeout:
        # Also reached if the alarm fired between the search returning and the timer being
        # cleared; counting that rare case as a time-out is the safe side.
        return None
    finally:
        signal.signal(signal.SIGALRM, old_handler)
        if old_delay > 0:
            remaining = max(old_delay - (time.monotonic() - start), 1e-3)
            signal.setitimer(signal.ITIMER_REAL, remaining, old_interval)
