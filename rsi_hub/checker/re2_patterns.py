"""User regular expressions for the `regex` check, run by RE2 (PyPI `google-re2`).

RE2 matches in time linear in the text for every pattern (no backtracking), so neither a pattern
nor a response can make a `regex` check slow, on any thread; there is no timer to fall back on.
The price is RE2's syntax (https://github.com/google/re2/wiki/Syntax), which the spec adopts
(spec/checks.md, amendments of checker 1.1):

- No backreferences (`\\1`, `(?P=name)`) and no look-around (`(?=`, `(?!`, `(?<=`, `(?<!`):
  refused with a `CheckError` when constraints are validated, saying so.
- `\\z` is the end of the text (Python's `\\Z`, which RE2 does not know); `$` without `(?m)`
  matches only at the very end, which is the same on the stripped response.
- `\\d`, `\\w`, `\\s` and `\\b` are ASCII; `\\pL` / `\\p{Greek}` name Unicode classes.
- Inline flags `(?i)`, `(?m)`, `(?s)`, `(?U)` work; `(?x)` does not.

The text is searched as UTF-8. A lone surrogate (not valid Unicode) is encoded as its three
bytes (`surrogatepass`), which RE2 reads as one character that `.` and negated classes match
and no named class does, so no response can make a search fail to run.

Our own fixed patterns elsewhere in the checker stay on Python's `re`, written so they cannot
backtrack (possessive quantifiers, disjoint alternatives).
"""

from __future__ import annotations

import re
from functools import lru_cache

import re2

# Not logged: a refused pattern is reported through CheckError, not on stderr.
_OPTIONS = re2.Options()
_OPTIONS.log_errors = False

# What RE2's parse errors mean for someone who wrote a Python pattern.
_EXPLAIN = (
    (
        re.compile(r"invalid escape sequence: \\[1-9]"),
        "backreferences such as \\1 are not supported",
    ),
    (
        re.compile(r"invalid perl operator: \(\?P$"),
        "named backreferences (?P=name) are not supported",
    ),
    (re.compile(r"invalid perl operator: \(\?<?[=!]"), "look-around assertions are not supported"),
    (re.compile(r"invalid escape sequence: \\Z"), "write \\z for the end of the text"),
    (re.compile(r"bad repetition operator: [+*?]\+"), "possessive quantifiers are not supported"),
    (re.compile(r"invalid perl operator: \(\?>"), "atomic groups are not supported"),
)


def _describe(err: re2.error) -> str:
    raw = err.args[0] if err.args else ""
    msg = raw.decode("utf-8", "replace") if isinstance(raw, bytes) else str(raw)
    for rx, why in _EXPLAIN:
        if rx.search(msg):
            return f"{why} ({msg})"
    return msg


# Each compiled RE2 may grow a DFA cache of up to 8 MiB while it searches: keep a few hundred.
@lru_cache(maxsize=256)
def _compile(pattern: str) -> re2._Regexp | str:
    """The compiled pattern, or RE2's explanation of why it is refused."""
    try:
        return re2.compile(pattern, _OPTIONS)
    except re2.error as err:
        return _describe(err)
    except (TypeError, ValueError) as err:  # e.g. a lone surrogate in the pattern
        return str(err)


def pattern_problem(pattern: str) -> str | None:
    """None if `pattern` is an RE2 pattern, else the phrase that completes
    "parameter 'pattern' must be ..." with what is wrong."""
    compiled = _compile(pattern)
    if isinstance(compiled, str):
        return (
            "an RE2 regular expression (RE2 matches in linear time and so has no "
            f"backreferences or look-around): {compiled}"
        )
    return None


def compiled(pattern: str) -> re2._Regexp:
    """`pattern` compiled by RE2 (cached); ValueError if RE2 refuses it (validation refuses
    such patterns before any search, so a check never gets here with one)."""
    rx = _compile(pattern)
    if isinstance(rx, str):
        raise ValueError(f"not an RE2 pattern: {rx}")
    return rx


def search_utf8(pattern: str, text_utf8: bytes) -> bool:
    """Whether the (validated) RE2 `pattern` matches anywhere in `text_utf8`."""
    return compiled(pattern).search(text_utf8) is not None


def utf8(text: str) -> bytes:
    """`text` as the bytes RE2 searches: UTF-8, lone surrogates kept as (invalid) bytes."""
    return text.encode("utf-8", "surrogatepass")
