"""EV4 (general ability) checks: numbers, option letters, patterns, answers, JSON. Tool calls and
refusals are in `checks_calls`, `code_tests` in `checks_code`.

Readings chosen where the spec is silent are in each function's docstring and tested.
"""

from __future__ import annotations

import decimal
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from rsi_hub.checker.context import Context, normalize
from rsi_hub.checker.core import Param, clip, register
from rsi_hub.checker.re2_patterns import search_utf8, utf8

_PASS: tuple[bool, str, None] = (True, "", None)

# --- number_eq ---------------------------------------------------------------------------------

# A number: optional sign (ASCII or U+2212) not glued to a word, then digits with optional
# 3-digit comma groups, an optional decimal part or a leading-dot decimal, an optional exponent
# and an optional `/denominator`. ASCII digits only. Nothing can backtrack: every run is
# possessive and the alternatives start differently.
_NUMBER = re.compile(
    r"(?<![\w.])([-+−]?+)"
    r"((?:[0-9]{1,3}+(?:,[0-9]{3}(?![0-9]))++|[0-9]++)(?:\.[0-9]++)?+|\.[0-9]++)"
    r"(?:[eE]([-+]?+)([0-9]++))?+"
    r"(?:/([0-9]++(?:\.[0-9]++)?+)(?![\w.]))?+"
)

# Exact decimal arithmetic: additions and products of finite decimals are exact in this context
# (it only ever allocates the digits a result has), and comparisons are exact in any context.
_EXACT = decimal.Context(
    prec=decimal.MAX_PREC, Emax=decimal.MAX_EMAX, Emin=decimal.MIN_EMIN, traps=[decimal.Inexact]
)
# Exponents past this many digits are clamped to +-10**_EXP_DIGITS: Decimal's exponent range
# ends near 10**18, and at that size only the sign of the exponent still decides a comparison
# with any value a constraint can hold.
_EXP_DIGITS = 15


@dataclass(frozen=True, slots=True)
class ReadNumber:
    """A number read from a response: `numerator / denominator`, exactly (`denominator` > 0).

    Decimals rather than fractions, so that `7e12345` stays the pair (7, 12345) and never
    becomes a 12346-digit integer until a comparison needs it.
    """

    numerator: decimal.Decimal
    denominator: decimal.Decimal


def _read(m: re.Match[str]) -> ReadNumber | None:
    """The exact value of one `_NUMBER` match, or None for a zero denominator."""
    sign, body, exp_sign, exp, den = m.groups()
    text = body.replace(",", "")
    if exp:
        digits = exp.lstrip("0") or "0"
        if len(digits) > _EXP_DIGITS:
            digits = "1" + "0" * _EXP_DIGITS
        text += f"e{exp_sign}{digits}"
    numerator = decimal.Decimal(text)
    if sign in ("-", "−"):
        numerator = -numerator
    denominator = decimal.Decimal(den) if den else decimal.Decimal(1)
    if not denominator:
        return None
    return ReadNumber(numerator, denominator)


def last_number(ctx: Context) -> tuple[str, ReadNumber | None] | None:
    """The last number in the response as (its text, its exact value), or None.

    Read from the end in growing windows, so a long response costs little. A match is trusted
    only if the window did not cut it (it does not start at the window's edge or after a comma).
    """

    def compute() -> tuple[str, ReadNumber | None] | None:
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
        return last.group(), _read(last)

    return ctx.memo("last_number", compute)


def exact(x: int | float) -> decimal.Decimal:
    """A constraint's number as an exact decimal: `repr()` gives the shortest decimal that
    round-trips, so 0.1 means one tenth, not the binary float nearest to it."""
    return decimal.Decimal(repr(x)) if isinstance(x, float) else decimal.Decimal(x)


def within(got: ReadNumber, value: int | float, tol: int | float) -> bool:
    """`|got - value| <= tol`, decided exactly for numbers of any size."""
    v, t = exact(value), exact(tol)
    lo, hi = _EXACT.subtract(v, t), _EXACT.add(v, t)
    d = got.denominator
    return _EXACT.multiply(lo, d) <= got.numerator <= _EXACT.multiply(hi, d)


def _show_number(x: int | float | str, limit: int = 40) -> str:
    """A number for a reason string, cut to `limit` characters."""
    # str() of an int past 4300 digits raises ValueError; Decimal's str has no such limit.
    s = x if isinstance(x, str) else str(decimal.Decimal(x) if type(x) is int else x)
    return s if len(s) <= limit else s[: limit - 3] + "..."


def _plain(x: int | float) -> int | float | str:
    """`x` for a result's `detail`: itself, or its decimal string for an int too long for
    `str()`/`json.dumps` (past 4300 digits they raise)."""
    return x if type(x) is float or x.bit_length() < 14_000 else str(decimal.Decimal(x))


@register(
    "number_eq",
    Param("value", "number", example=42),
    Param("tol", "number_ge0", required=False, example=0),
    summary="the last number in the response is value (within tol)",
)
def number_eq(ctx: Context, c: Mapping[str, Any]) -> tuple[bool, str, dict[str, Any] | None]:
    """Passes when |last number - value| <= tol (default 0), compared exactly at any size.

    Numbers: `-3`, `+3`, `−3` (U+2212), `1,234,567` (comma thousands), `3.5`, `.5`, `1e-3`,
    `7e12345` (7×10^12345, never 7), `3/4` (a fraction), `50%` (reads 50). A sign glued to a
    word is a hyphen (`3-5` ends with 5). `x2`, `H2O` hold no number (digits glued to letters),
    `5th` reads 5. LaTeX `\\frac{1}{2}` reads as 1 then 2, so ask for a plain number. A
    constraint's float means its shortest decimal (`0.1` is one tenth); a `/0` fraction is
    not usable and fails.
    """
    value, tol = c["value"], c.get("tol", 0)
    want = _show_number(value) + (f" (±{_show_number(tol)})" if tol else "")
    found = last_number(ctx)
    if found is None:
        return False, f"expected {want}, found no number", {"expected": _plain(value), "got": None}
    text, got = found
    if got is None:
        return False, f"expected {want}, the last number {clip(text)} is not usable", None
    if within(got, value, tol):
        return _PASS
    return (
        False,
        f"expected {want}, the last number is {_show_number(text, 60)}",
        {"expected": _plain(value), "got": text[:200]},
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
    """Passes when the response's final option letter (see `final_choice`) is `answer`, one
    capital A-Z (checked before judging)."""
    want = c["answer"]
    got = ctx.memo("choice", lambda: final_choice(ctx.t[-20000:]))
    if got == want:
        return _PASS
    found = f"found {got}" if got else "found no option letter"
    return False, f"expected option {want}, {found}", {"expected": want, "got": got}


# --- regex, contains_any, json_valid ------------------------------------------------------------


@register(
    "regex",
    Param("pattern", "pattern", example=r"^\d+$"),
    summary="the RE2 pattern matches somewhere in t",
)
def regex(ctx: Context, c: Mapping[str, Any]) -> tuple[bool, str, dict[str, Any] | None]:
    """Passes when the RE2 `pattern` matches somewhere in the stripped response (a search, like
    `re.search`), in time linear in the response for any pattern.

    No flags are added: use inline flags such as `(?i)` or `(?m)`. RE2 syntax, not Python's: no
    backreferences or look-around (a `CheckError`), `\\z` for the end of the text, ASCII `\\d`
    and `\\w`; see `rsi_hub.checker.re2_patterns`.
    """
    if search_utf8(c["pattern"], ctx.memo("utf8", lambda: utf8(ctx.t))):
        return _PASS
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
