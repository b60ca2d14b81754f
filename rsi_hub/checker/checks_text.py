"""Text checks: required and forbidden strings, words and characters, openings, endings, case."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rsi_hub.checker.checks_counts import count_word
from rsi_hub.checker.context import Context, norm_param
from rsi_hub.checker.core import Param, clip, plural, register

_PASS: tuple[bool, str, None] = (True, "", None)


def _contains(ctx: Context, needle: str, casefold: bool) -> bool:
    """Whether the normalised `needle` is a substring of N(t) (casefolded when `casefold`)."""
    if needle in (ctx.fold_cf() if casefold else ctx.fold()):
        # N(t) and fold() agree on every white-space-free run, and a single space between two
        # non-space characters of fold() stays one space in N(t): a literal hit is a hit.
        return True
    if " " not in needle:
        return False
    # A phrase may still match across other white space (a newline, two spaces): ask N(t).
    return needle in (ctx.norm_cf() if casefold else ctx.norm())


@register("contains", Param("text", "str", example="best regards"), summary="N(text) in N(t)")
def contains(ctx: Context, c: Mapping[str, Any]) -> tuple[bool, str, dict[str, Any] | None]:
    """Passes when N(text) is a substring of N(t) (case-sensitive). An empty text passes."""
    needle = norm_param(c["text"])
    if _contains(ctx, needle, False):
        return _PASS
    hint = " (it occurs with different case)" if _contains(ctx, needle.casefold(), True) else ""
    return False, f"expected to contain {clip(needle)}, not found{hint}", {"text": needle}


@register(
    "contains_norm",
    Param("text", "str", example="best regards"),
    summary="N(text).casefold() in N(t).casefold()",
)
def contains_norm(ctx: Context, c: Mapping[str, Any]) -> tuple[bool, str, dict[str, Any] | None]:
    """Passes when N(text).casefold() is a substring of N(t).casefold(). An empty text passes."""
    needle = norm_param(c["text"]).casefold()
    if _contains(ctx, needle, True):
        return _PASS
    return (
        False,
        f"expected to contain {clip(norm_param(c['text']))} (ignoring case), not found",
        {"text": needle},
    )


@register("no_word", Param("word", "word", example="very"), summary="the word does not occur")
def no_word(ctx: Context, c: Mapping[str, Any]) -> tuple[bool, str, dict[str, Any] | None]:
    """Passes when the word (or phrase) does not occur by word match (see `count_word`)."""
    got = count_word(ctx, c["word"])
    if got == 0:
        return _PASS
    return (
        False,
        f"expected no {c['word']!r}, found {plural(got, 'occurrence')}",
        {"expected": 0, "got": got, "delta": got, "unit": "occurrences"},
    )


@register(
    "no_char",
    Param("char", "char", example=","),
    Param("case_sensitive", "bool", required=False, example=False),
    summary="the character does not occur in t",
)
def no_char(ctx: Context, c: Mapping[str, Any]) -> tuple[bool, str, dict[str, Any] | None]:
    """Passes when the character does not occur in t (the raw stripped text, not N(t)).

    For a letter (`str.isalpha`), both its lower- and upper-case forms are forbidden unless
    `case_sensitive` is true, as far as Python's one-character case mappings go (`ẞ` also
    forbids `ß`; `ß`, whose upper case is `SS`, forbids only itself). Anything else is
    matched exactly, so `'` does not forbid `’` and `Ⓐ` (a symbol) does not forbid `ⓐ`.
    """
    ch = c["char"]
    t = ctx.t
    forms = {ch}
    if ch.isalpha() and not c.get("case_sensitive", False):
        forms.update(f for f in (ch.lower(), ch.upper(), ch.swapcase()) if len(f) == 1)
    got = sum(t.count(f) for f in forms)
    if got == 0:
        return _PASS
    scope = "" if len(forms) == 1 else " (either case)"
    return (
        False,
        f"expected no {ch!r}{scope}, found {got}",
        {"expected": 0, "got": got, "delta": got, "unit": "characters"},
    )


def _edge(ctx: Context, c: Mapping[str, Any], at_start: bool) -> tuple[bool, str, dict | None]:
    needle = norm_param(c["text"])
    m = len(needle)
    norm = ctx.norm_head(m) if at_start else ctx.norm_tail(m)
    ok = norm.startswith(needle) if at_start else norm.endswith(needle)
    if ok:
        return _PASS
    k = max(len(needle), 10)
    found = norm[:k] if at_start else norm[-k:]
    verb = "start" if at_start else "end"
    return (
        False,
        f"expected to {verb} with {clip(needle)}, {verb}s with {clip(found)}",
        {"text": needle, "found": found},
    )


@register("startswith", Param("text", "str", example="Dear"), summary="N(t) starts with N(text)")
def startswith(ctx: Context, c: Mapping[str, Any]) -> tuple[bool, str, dict[str, Any] | None]:
    """Passes when N(t) starts with N(text), case-sensitive."""
    return _edge(ctx, c, True)


@register("endswith", Param("text", "str", example="Thank you."), summary="N(t) ends with N(text)")
def endswith(ctx: Context, c: Mapping[str, Any]) -> tuple[bool, str, dict[str, Any] | None]:
    """Passes when N(t) ends with N(text), case-sensitive."""
    return _edge(ctx, c, False)


_LOWER_BYTES = bytes(range(ord("a"), ord("z") + 1))
_UPPER_BYTES = bytes(range(ord("A"), ord("Z") + 1))


def _case_counts(ctx: Context) -> tuple[bool, int, int]:
    """(has a letter, lower-case letters, upper-case letters) of `t`.

    ASCII text is counted with `bytes.translate` deletions, at memory speed; other text one
    character at a time with `str.isalpha` / `islower` / `isupper`.
    """

    def compute() -> tuple[bool, int, int]:
        t = ctx.t
        if t.isascii():
            b = t.encode("ascii")
            lower = len(b) - len(b.translate(None, _LOWER_BYTES))
            upper = len(b) - len(b.translate(None, _UPPER_BYTES))
            return lower + upper > 0, lower, upper
        has_letter = any(map(str.isalpha, t))
        return has_letter, sum(map(str.islower, t)), sum(map(str.isupper, t))

    return ctx.memo("case_counts", compute)


@register("is_upper", summary="at least one letter and no lower-case letter")
def is_upper(ctx: Context, c: Mapping[str, Any]) -> tuple[bool, str, dict[str, Any] | None]:
    """Passes when t has at least one letter and no lower-case letter (`str.islower`).

    Letters without case (CJK, digits are not letters) count as letters but are neither lower
    nor upper, so `北京 OK` passes.
    """
    has_letter, lower, _ = _case_counts(ctx)
    if has_letter and lower == 0:
        return _PASS
    if not has_letter:
        return False, "expected upper-case text, found no letter", {"got": 0}
    return (
        False,
        f"expected upper-case text, found {plural(lower, 'lower-case letter')}",
        {"got": lower},
    )


@register("is_lower", summary="at least one letter and no upper-case letter")
def is_lower(ctx: Context, c: Mapping[str, Any]) -> tuple[bool, str, dict[str, Any] | None]:
    """Passes when t has at least one letter and no upper-case letter (`str.isupper`).

    Title-case letters such as `ǅ` are neither, so they do not fail this check.
    """
    has_letter, _, upper = _case_counts(ctx)
    if has_letter and upper == 0:
        return _PASS
    if not has_letter:
        return False, "expected lower-case text, found no letter", {"got": 0}
    return (
        False,
        f"expected lower-case text, found {plural(upper, 'upper-case letter')}",
        {"got": upper},
    )
