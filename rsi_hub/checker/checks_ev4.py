"""EV4 (general ability) checks: numbers, option letters, patterns, answers, JSON. Tool calls and
refusals are in `checks_calls`, `code_tests` in `checks_code`.

Readings chosen where the spec is silent are in each function's docstring and tested.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from fractions import Fraction
from typing import Any

from rsi_hub.checker.context import Context, normalize
from rsi_hub.checker.core import Param, clip, register
from rsi_hub.checker.safe_regex import guarded_search

_PASS: tuple[bool, str, None] = (True, "", None)

# --- number_eq ---------------------------------------------------------------------------------

# A number: optional sign (ASCII or U+2212) not glued to a word, then digits with optional
# 3-digit comma groups, an optional decimal part or a leading-dot decimal, an optional exponent
# and an optional `/denominator`. ASCII digits only. Nothing can backtrack: every run is
# possessive and the alternatives start differently.
_NUMBER = re.compile(
    r"(?<![\w.])([-+−]?+)"
    r"((?:[0-9]{1,3}+(?:,[0-9]{3}(?![0-9]))++|[0-9]++)(?:\.[0-9]++)?+|\.[0-9]++)"
    r"(?:[eE]([-+]?+[0-9]{1,4}+)(?![0-9]))?+"
    r"(?:/([0-9]++(?:\.[0-9]++)?+)(?![\w.]))?+"
)
_MAX_NUMBER_CHARS = 100


def _to_fraction(m: re.Match[str]) -> Fraction | None:
    sign, body, exp, den = m.groups()
    if len(m.group()) > _MAX_NUMBER_CHARS:
        return None
    value = Fraction(body.replace(",", ""))
    if exp:
        value *= Fraction(10) ** int(exp)
    if den:
        d = Fraction(den)
        if d == 0:
            return None
        value /= d
    return -value if sign in ("-", "−") else value


def last_number(ctx: Context) -> tuple[str, Fraction | None] | None:
    """The last number in the response as (its text, its exact value), or None.

    Read from the end in growing windows, so a long response costs little. A match is trusted
    only if the window did not cut it (it does not start at the window's edge or after a comma).
    """

    def compute() -> tuple[str, Fraction | None] | None:
        full = ctx.t
        # Every number ends in a digit, so nothing after the last digit matters; a response
        # without digits (checked with ten C-speed scans) has no number at all.
        end = max(full.rfind(d) for d in "0123456789") + 1
        if end == 0:
            return None
        t = full[:end]
        size = 256
        while True:
            start = max(0, len(t) - size)
            window = t[start:]
            last = None
            for last in _NUMBER.finditer(window):  # noqa: B007 - we want the final match
                pass
            if start == 0:
                break
            if last is not None and last.start() > 0 and window[last.start() - 1] != ",":
                break
            size *= 16
        if last is None:
            return None
        return last.group(), _to_fraction(last)

    return ctx.memo("last_number", compute)


def _exact(x: int | float) -> Fraction:
    # repr() gives the shortest decimal that round-trips, so 0.1 means one tenth, not the
    # binary float nearest to it.
    return Fraction(repr(x)) if isinstance(x, float) else Fraction(x)


@register(
    "number_eq",
    Param("value", "number", example=42),
    Param("tol", "number_ge0", required=False, example=0),
    summary="the last number in the response is value (within tol)",
)
def number_eq(ctx: Context, c: Mapping[str, Any]) -> tuple[bool, str, dict[str, Any] | None]:
    """Passes when |last number - value| <= tol (default 0), compared exactly (fractions).

    Numbers: `-3`, `+3`, `−3` (U+2212), `1,234,567` (comma thousands), `3.5`, `.5`, `1e-3`,
    `3/4` (a fraction), `50%` (reads 50). A sign glued to a word is a hyphen (`3-5` ends with
    5). `x2`, `H2O` hold no number (digits glued to letters), `5th` reads 5. LaTeX `\\frac{1}{2}`
    reads as 1 then 2, so ask for a plain number.
    """
    value, tol = c["value"], c.get("tol", 0)
    want = f"{value}" + (f" (±{tol})" if tol else "")
    found = last_number(ctx)
    if found is None:
        return False, f"expected {want}, found no number", {"expected": value, "got": None}
    text, got = found
    if got is None:
        return False, f"expected {want}, the last number {clip(text)} is not usable", None
    if abs(got - _exact(value)) <= _exact(tol):
        return _PASS
    return (
        False,
        f"expected {want}, the last number is {text}",
        {"expected": value, "got": text},
    )


# --- choice ------------------------------------------------------------------------------------

_EXPLICIT_CHOICE = re.compile(
    r"(?i:\b(?:answer|option|choice)\b)[^A-Za-z0-9\n]{0,20}+(?:(?i:is)\b)?+"
    r"[^A-Za-z0-9\n]{0,10}+([A-Z])(?![A-Za-z0-9])"
)
_ONLY_LETTER = re.compile(r"[\s*_(\[]*+([A-Z])[\s*_)\].:]*+")
_LETTER_TOKEN = re.compile(r"(?<![A-Za-z0-9'’])[(\[]?+([A-Z])[)\].:]?+(?![A-Za-z0-9'’])")
_ARTICLE_LIKE = re.compile(r"[ \t]+[a-z]")


def final_choice(t: str) -> str | None:
    """The final option letter of a response (upper case), or None.

    In order: the last explicit `answer/option/choice ... X` (`The answer is (C)`,
    `**Answer:** B`); else a response that is only a letter (`B`, `(B)`, `**B**`, `B.`); else the
    last stand-alone capital letter, skipping `A` and `I` used as words (`A cat`, `I think`).
    Only capital letters count.
    """
    last = None
    for last in _EXPLICIT_CHOICE.finditer(t):  # noqa: B007
        pass
    if last is not None:
        return last.group(1)
    m = _ONLY_LETTER.fullmatch(t)
    if m:
        return m.group(1)
    tokens = list(_LETTER_TOKEN.finditer(t[-4000:]))
    for tok in reversed(tokens):
        letter = tok.group(1)
        if letter in ("A", "I") and tok.group() == letter and _ARTICLE_LIKE.match(t, tok.end()):
            continue
        return letter
    return None


@register(
    "choice", Param("answer", "letter", example="B"), summary="the final option letter is answer"
)
def choice(ctx: Context, c: Mapping[str, Any]) -> tuple[bool, str, dict[str, Any] | None]:
    """Passes when the response's final option letter (see `final_choice`) is `answer` (any case
    in the constraint)."""
    want = c["answer"].upper()
    got = ctx.memo("choice", lambda: final_choice(ctx.t[-20000:]))
    if got == want:
        return _PASS
    found = f"found {got}" if got else "found no option letter"
    return False, f"expected option {want}, {found}", {"expected": want, "got": got}


# --- regex, contains_any, json_valid ------------------------------------------------------------


@register(
    "regex", Param("pattern", "pattern", example=r"^\d+$"), summary="re.search(pattern, t) matches"
)
def regex(ctx: Context, c: Mapping[str, Any]) -> tuple[bool, str, dict[str, Any] | None]:
    """Passes when `re.search(pattern, t)` finds a match in the stripped response.

    No flags are added: use inline flags such as `(?i)` or `(?m)`. Patterns are restricted and
    the search is time-guarded; see `rsi_hub.checker.safe_regex`.
    """
    found = guarded_search(c["pattern"], ctx.t)
    if found:
        return _PASS
    if found is None:
        return False, "regex search timed out", {"timed_out": True}
    return False, f"expected a match for {clip(c['pattern'])}, found none", None


@register(
    "contains_any",
    Param("texts", "str_list", example=["Paris", "paris, france"]),
    Param("case_sensitive", "bool", required=False, example=False),
    summary="N(t) contains at least one of the texts",
)
def contains_any(ctx: Context, c: Mapping[str, Any]) -> tuple[bool, str, dict[str, Any] | None]:
    """Passes when N(text) is a substring of N(t) for at least one text.

    Case-insensitive by default (like `contains_norm`), since EV4 answers are judged on content;
    `case_sensitive: true` compares like `contains`.
    """
    cs = c.get("case_sensitive", False)
    hay = ctx.norm() if cs else ctx.norm_cf()
    for text in c["texts"]:
        needle = normalize(text) if cs else normalize(text).casefold()
        if needle in hay:
            return _PASS
    shown = ", ".join(clip(x, 30) for x in c["texts"][:6])
    return False, f"expected any of {shown}, found none", None


@register("json_valid", summary="the response is JSON (spec's JSON rule)")
def json_valid(ctx: Context, c: Mapping[str, Any]) -> tuple[bool, str, dict[str, Any] | None]:
    """Passes when the response is JSON by the spec's rule: as a whole, or its one fenced block."""
    parsed = ctx.json()
    if parsed.ok:
        return _PASS
    return False, f"expected JSON, got no JSON: {parsed.error}", {"json_error": parsed.error}
