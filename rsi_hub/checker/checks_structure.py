"""Structure checks: bullet and numbered lists, markdown tables, JSON shapes.

Lines are the lines of `t` with CRLF and lone CR turned into LF. Readings chosen where the spec
is silent (each is tested):

- Bullets: after indentation (spaces/tabs), `-`, `*` or `•` and then a space or a tab. Nested
  bullets are lines too, so they count. A markdown thematic break (`---`, `***`, `* * *`,
  `- - -`, `___`: three or more of one of `-*_`, optionally spaced, nothing else) is a rule,
  not a bullet, even when it starts with `* `.
- Numbered items: as the spec says (checker 1.1), lines that start, after at most 3 spaces of
  indentation (a CommonMark list item), with 1 to 9 ASCII digits, then `.` or `)`, then a space
  or a tab (`1.5 kg` and `2023.` at the end of a line are not items). A line indented by 4
  spaces or more, or by a tab, is not an item, so a sub-list indented that deep does not
  disturb the top-level numbering; one indented by 1 to 3 spaces does count (the spec's rule).
  `numbered` wants exactly n such lines numbered 1, 2, ... n in order of appearance;
  `numbered_start` takes all of them, in order, as the list.
- Tables: the first block of consecutive lines that start (after indentation) with `|` and
  whose second line is a separator row (cells of `-` with optional `:` at either end, e.g.
  `|:---|--:|`) is the table; blocks without such a separator are not tables and are skipped.
  The data rows are the block's lines after the separator.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from rsi_hub.checker.context import Context
from rsi_hub.checker.core import Param, clip, count_result, plural, register
from rsi_hub.checker.jsonutil import json_kind

_PASS: tuple[bool, str, None] = (True, "", None)

# Line patterns run on `ctx.nl_text()` and start with the newline that opens each line.
_BULLET = re.compile(r"\n(?![ \t]*+([-*_])(?:[ \t]*+\1){2,}+[ \t]*+(?:\n|\Z))[ \t]*+[-*•][ \t]")
_NUMBERED = re.compile(r"\n {0,3}+([0-9]{1,9}+)[.)][ \t]")
# A header line immediately followed by a separator row; the match ends at the end of the
# separator line.
_CELL = r"[ \t]*+:?-++:?[ \t]*+"
_TABLE_HEAD = re.compile(rf"\n[ \t]*+\|[^\n]*+\n[ \t]*+\|{_CELL}(?:\|{_CELL})*+\|?[ \t]*+(?=\n|\Z)")
_TABLE_ROWS = re.compile(r"(?:\n[ \t]*+\|[^\n]*+)*+")
_PIPE_LINE = re.compile(r"[ \t]*+\|")


def bullet_count(ctx: Context) -> int:
    """Lines that are bullet items (see module docstring)."""
    return ctx.memo("bullets", lambda: len(_BULLET.findall(ctx.nl_text())))


def numbered_items(ctx: Context) -> list[int]:
    """The numbers of the numbered lines, in order of appearance."""
    return ctx.memo("numbered", lambda: [int(k) for k in _NUMBERED.findall(ctx.nl_text())])


def _show_numbers(nums: list[int], limit: int = 12) -> str:
    shown = ", ".join(map(str, nums[:limit]))
    return shown + (", ..." if len(nums) > limit else "")


@register("bullet", Param("n", "int_ge0", example=3), summary="exactly n bullet lines")
def bullet(ctx: Context, c: Mapping[str, Any]) -> tuple[bool, str, dict[str, Any] | None]:
    """Passes when exactly n lines are bullet items (`-`, `*` or `•` and a space, indented or
    not; thematic breaks excluded)."""
    n = c["n"]
    got = bullet_count(ctx)
    if got == n:
        return _PASS
    return count_result(plural(n, "bullet line"), got, n, "bullet lines")


@register("numbered", Param("n", "int_ge0", example=3), summary="items numbered 1..n in order")
def numbered(ctx: Context, c: Mapping[str, Any]) -> tuple[bool, str, dict[str, Any] | None]:
    """Passes when exactly n lines start (after at most 3 spaces) with `K.` or `K)` and a space,
    numbered 1..n in order."""
    n = c["n"]
    nums = numbered_items(ctx)
    if len(nums) != n:
        return count_result(plural(n, "numbered line"), len(nums), n, "numbered lines")
    if nums != list(range(1, n + 1)):
        return (
            False,
            f"expected items numbered 1 to {n} in order, got {_show_numbers(nums)}",
            {"expected": n, "got": n, "delta": 0, "unit": "numbered lines", "numbers": nums},
        )
    return _PASS


@register(
    "numbered_start",
    Param("k", "int_ge0", example=1),
    summary="a numbered list whose first item is k, the rest consecutive",
)
def numbered_start(ctx: Context, c: Mapping[str, Any]) -> tuple[bool, str, dict[str, Any] | None]:
    """Passes when there is a numbered list, its first item is numbered k and every next item
    is the previous plus one."""
    k = c["k"]
    nums = numbered_items(ctx)
    if not nums:
        return False, f"expected a numbered list starting at {k}, found no numbered list", None
    if nums[0] != k:
        return (
            False,
            f"expected a numbered list starting at {k}, it starts at {nums[0]}",
            {"numbers": nums},
        )
    if nums != list(range(k, k + len(nums))):
        return (
            False,
            f"expected consecutive numbers from {k}, got {_show_numbers(nums)}",
            {"numbers": nums},
        )
    return _PASS


def table_data_rows(ctx: Context) -> int | None:
    """Data rows of the first markdown table, or None when there is no table."""

    def compute() -> int | None:
        text = ctx.nl_text()
        pos = 0
        while True:
            m = _TABLE_HEAD.search(text, pos)
            if m is None:
                return None
            start = m.start()  # the newline before the header line
            # The header must open its block: a |-line just above makes this a later line of a
            # block whose second line was not a separator, i.e. not a table.
            if start > 0:
                prev_start = text.rfind("\n", 0, start) + 1
                if _PIPE_LINE.match(text, prev_start):
                    pos = m.end()
                    continue
            rows = _TABLE_ROWS.match(text, m.end())
            return rows.group().count("\n") if rows else 0

    return ctx.memo("table_rows", compute)


@register("table_rows", Param("n", "int_ge0", example=3), summary="first table has n data rows")
def table_rows(ctx: Context, c: Mapping[str, Any]) -> tuple[bool, str, dict[str, Any] | None]:
    """Passes when the first markdown table has exactly n data rows below its separator."""
    n = c["n"]
    got = table_data_rows(ctx)
    if got is None:
        return (
            False,
            f"expected a markdown table with {plural(n, 'data row')}, found no table",
            {"expected": n, "got": None},
        )
    if got == n:
        return _PASS
    return count_result(f"a table with {plural(n, 'data row')}", got, n, "data rows")


def _not_object(ctx: Context, want: str) -> tuple[bool, str, dict[str, Any] | None] | None:
    parsed = ctx.json()
    if not parsed.ok:
        return False, f"expected {want}, got no JSON: {parsed.error}", {"json_error": parsed.error}
    if not isinstance(parsed.value, dict):
        return False, f"expected {want}, got {json_kind(parsed.value)}", None
    return None


def _keys_text(keys: list[str], limit: int = 8) -> str:
    shown = ", ".join(clip(k, 30) for k in keys[:limit])
    return shown + (", ..." if len(keys) > limit else "")


@register(
    "json_keys",
    Param("keys", "str_list_or_empty", example=["name", "age"]),
    summary="a JSON object with every key",
)
def json_keys(ctx: Context, c: Mapping[str, Any]) -> tuple[bool, str, dict[str, Any] | None]:
    """Passes when the response is a JSON object (spec's JSON rule) holding every key at its
    top level. An empty key list asks only for a JSON object. (`json_keys_any` needs at least
    one key: with none it could never pass, so that is a `CheckError`.)"""
    bad = _not_object(ctx, "a JSON object")
    if bad:
        return bad
    obj = ctx.json().value
    missing = [k for k in c["keys"] if k not in obj]
    if not missing:
        return _PASS
    return (
        False,
        f"expected a JSON object with keys {_keys_text(c['keys'])}, missing {_keys_text(missing)}",
        {"missing": missing},
    )


@register(
    "json_keys_any",
    Param("keys", "str_list", example=["summary", "abstract"]),
    summary="a JSON object with at least one of the keys",
)
def json_keys_any(ctx: Context, c: Mapping[str, Any]) -> tuple[bool, str, dict[str, Any] | None]:
    """Passes when the response is a JSON object holding at least one of the keys at its top
    level."""
    bad = _not_object(ctx, "a JSON object")
    if bad:
        return bad
    obj = ctx.json().value
    if any(k in obj for k in c["keys"]):
        return _PASS
    has = list(obj)
    return (
        False,
        f"expected a JSON object with any of {_keys_text(c['keys'])}, "
        f"it has {_keys_text(has) if has else 'no keys'}",
        {"keys": has[:50]},
    )


@register("json_array_len", Param("n", "int_ge0", example=3), summary="a JSON array of n elements")
def json_array_len(ctx: Context, c: Mapping[str, Any]) -> tuple[bool, str, dict[str, Any] | None]:
    """Passes when the response is a JSON array of exactly n elements."""
    n = c["n"]
    parsed = ctx.json()
    want = f"a JSON array of {plural(n, 'element')}"
    if not parsed.ok:
        return False, f"expected {want}, got no JSON: {parsed.error}", {"json_error": parsed.error}
    if not isinstance(parsed.value, list):
        return False, f"expected {want}, got {json_kind(parsed.value)}", None
    got = len(parsed.value)
    if got == n:
        return _PASS
    return count_result(want, got, n, "elements")
