"""Fenced code blocks and bounded JSON parsing of a response.

The spec's JSON rule: the response is parsed as JSON as a whole; if that fails and it holds
exactly one fenced code block (```` ``` ```` or ```` ```json ````), that block is parsed instead;
anything else is "not JSON". Readings chosen where the spec is silent:

- A fence is a line starting (after spaces or tabs) with three or more backticks; the rest of
  the opening line is its info string. It closes at the next line holding only backticks (three
  or more). An unclosed fence is still a block (its body runs to the end of the response) but is
  never parsed as JSON, because a truncated JSON answer is not a JSON answer.
- Every fenced block counts towards "exactly one", whatever its info string; the one block is
  parsed only if its info string is empty or `json` (any case).
- JSON is strict: `NaN`, `Infinity` and `-Infinity` are not JSON.
- Bounds: a candidate longer than `MAX_JSON_CHARS` characters or nested deeper than
  `MAX_JSON_DEPTH` is "not JSON" (with that reason). The C parser stops at the interpreter's
  recursion limit on its own; the depth bound, checked after parsing, keeps the verdict the same
  whatever the caller's stack depth, and a RecursionError never escapes.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

MAX_JSON_CHARS = 2_000_000
MAX_JSON_DEPTH = 256

# Runs on "\n" + text: the leading literal newline lets the engine scan fast for line starts.
_FENCE_LINE = re.compile(r"\n[ \t]*+(`{3,}+)([^\n]*+)")


@dataclass(frozen=True, slots=True)
class Fence:
    """A fenced code block: info string (lower-cased first word), body, and whether it closed."""

    info: str
    body: str
    closed: bool


@dataclass(frozen=True, slots=True)
class JsonParse:
    """Outcome of parsing a response as JSON: `ok`, the `value`, where it came from
    (`"whole"` or `"fence"`), and `error` (why it is not JSON) when not ok."""

    ok: bool
    value: Any = None
    source: str = ""
    error: str = ""


def find_fences(text: str) -> list[Fence]:
    """All fenced code blocks of `text` (LF line breaks), in order. Linear in `len(text)`."""
    fences: list[Fence] = []
    if "```" not in text:
        return fences
    text = "\n" + text
    open_info: str | None = None
    body_start = 0
    for m in _FENCE_LINE.finditer(text):
        rest = m.group(2)
        if open_info is None:
            words = rest.split(maxsplit=1)
            open_info = words[0].lower() if words else ""
            body_start = m.end() + 1
        elif not rest.strip(" \t`"):
            # A closing fence: only backticks (and blanks) on the line.
            fences.append(Fence(open_info, text[body_start : m.start()], True))
            open_info = None
        # Any other fence-looking line inside an open block is content.
    if open_info is not None:
        fences.append(Fence(open_info, text[body_start:], False))
    return fences


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _depth_exceeds(value: Any, limit: int) -> bool:
    """Whether a parsed JSON value nests containers deeper than `limit` (iterative: no
    recursion)."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        v, d = stack.pop()
        if isinstance(v, dict):
            if d > limit:
                return True
            stack.extend((x, d + 1) for x in v.values() if isinstance(x, (dict, list)))
        elif isinstance(v, list):
            if d > limit:
                return True
            stack.extend((x, d + 1) for x in v if isinstance(x, (dict, list)))
    return False


def parse_json_text(s: str) -> JsonParse:
    """Parse `s` as strict, bounded JSON; never raises."""
    if len(s) > MAX_JSON_CHARS:
        return JsonParse(False, error=f"longer than {MAX_JSON_CHARS:,} characters")
    try:
        value = json.loads(s, parse_constant=_reject_constant)
    except RecursionError:
        return JsonParse(False, error=f"nested deeper than {MAX_JSON_DEPTH} levels")
    except ValueError as err:  # JSONDecodeError, NaN/Infinity, over-long integer literals
        msg = err.msg if isinstance(err, json.JSONDecodeError) else str(err)
        return JsonParse(False, error=f"invalid JSON ({msg})")
    if _depth_exceeds(value, MAX_JSON_DEPTH):
        return JsonParse(False, error=f"nested deeper than {MAX_JSON_DEPTH} levels")
    return JsonParse(True, value=value)


def parse_response_json(t: str, fences: Callable[[], list[Fence]]) -> JsonParse:
    """Apply the spec's JSON rule to the stripped response `t`; never raises."""
    if not t:
        return JsonParse(False, error="empty response")
    whole = parse_json_text(t)
    if whole.ok:
        return JsonParse(True, whole.value, "whole")
    blocks = fences()
    if len(blocks) != 1:
        if not blocks:
            return whole
        return JsonParse(False, error=f"{len(blocks)} fenced blocks, expected JSON or exactly one")
    block = blocks[0]
    if not block.closed:
        return JsonParse(False, error="unclosed fenced block")
    if block.info not in ("", "json"):
        return JsonParse(False, error=f"the fenced block is {block.info!r}, not JSON")
    inner = parse_json_text(block.body)
    if inner.ok:
        return JsonParse(True, inner.value, "fence")
    return JsonParse(False, error=f"fenced block: {inner.error}")


def json_kind(value: Any) -> str:
    """`"a JSON object"`, `"a JSON array"`, `"a JSON string"` ... for reason strings."""
    if isinstance(value, dict):
        return "a JSON object"
    if isinstance(value, list):
        return "a JSON array"
    if isinstance(value, str):
        return "a JSON string"
    if isinstance(value, bool):
        return "a JSON boolean"
    if value is None:
        return "JSON null"
    return "a JSON number"
