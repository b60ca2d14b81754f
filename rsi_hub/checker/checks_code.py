"""The `code_tests` check: run the response's Python code in the sandbox, judge it here."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from rsi_hub.checker.context import Context
from rsi_hub.checker.core import Param, register
from rsi_hub.checker.sandbox import DEFAULT_TIMEOUT, run_calls, run_tests

_PYTHON_INFOS = ("", "python", "py", "python3", "py3")
MAX_CODE_CHARS = 200_000


def response_code(ctx: Context) -> str:
    """The Python code of a response.

    If the response has fenced code blocks, the code is every block whose info string is empty
    or Python (`python`, `py`, `python3`), joined in order with blank lines (answers often split
    a solution over several blocks); an unclosed last block counts (a truncated answer may still
    define the function). Blocks in other languages are ignored. Without fences, the whole
    stripped response is the code.
    """
    fences = ctx.fences()
    if not fences:
        return ctx.t
    return "\n\n".join(f.body for f in fences if f.info in _PYTHON_INFOS)


def json_equal(a: Any, b: Any) -> bool:
    """Type-strict equality of plain JSON values: `1`, `1.0` and `true` all differ, as do a list
    and anything else; dicts compare key by key."""
    if type(a) is not type(b):
        return False
    if type(a) is list:
        return len(a) == len(b) and all(json_equal(x, y) for x, y in zip(a, b, strict=True))
    if type(a) is dict:
        return a.keys() == b.keys() and all(json_equal(a[k], b[k]) for k in a)
    return bool(a == b)


def _call_text(name: str, case: Mapping[str, Any]) -> str:
    parts = [repr(x) for x in case.get("args", [])]
    parts += [f"{k}={v!r}" for k, v in case.get("kwargs", {}).items()]
    text = f"{name}({', '.join(parts)})"
    return text if len(text) <= 80 else text[:77] + "..."


def _show(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 80 else text[:77] + "..."


def _judge_cases(
    name: str, cases: list[Mapping[str, Any]], results: list[Any]
) -> tuple[bool, str, dict[str, Any] | None]:
    """Compare what the sandbox returned with each case's `expect`, here, in the trusted process."""
    if len(results) != len(cases):
        return False, "expected the tests to pass; the code returned malformed results", None
    for i, (case, got) in enumerate(zip(cases, results, strict=True), 1):
        where = f"case {i} of {len(cases)}: {_call_text(name, case)}"
        if type(got) is dict and set(got) == {"value"}:
            if json_equal(got["value"], case["expect"]):
                continue
            found = f"returned {_show(got['value'])}, expected {_show(case['expect'])}"
        elif type(got) is dict and set(got) == {"error"} and type(got["error"]) is str:
            found = got["error"][:300]
        else:
            found = "gave a malformed result"
        return False, f"expected the tests to pass; {where} {found}", {"case": i}
    return True, "", None


@register(
    "code_tests",
    Param("entry_point", "identifier", example="add"),
    Param("cases", "cases", required=False, example=[{"args": [1, 2], "expect": 3}]),
    Param("tests", "tests", required=False, example="assert add(1, 2) == 3"),
    Param("timeout", "timeout", required=False, example=10),
    summary="the response's Python code passes the tests in a sandbox",
)
def code_tests(ctx: Context, c: Mapping[str, Any]) -> tuple[bool, str, dict[str, Any] | None]:
    """Passes when the response's code (see `response_code`) defines `entry_point` and passes
    every case (or, in the weaker form, every free-form test), run in a separate sandboxed
    process that sees nothing of the host (see `rsi_hub.checker.sandbox`: time, memory, process
    and file limits, no network, a scratch tmpfs). Exactly one of:

    - `cases` (preferred): `[{"args": [...], "kwargs": {...}, "expect": ...}]`. The sandbox only
      calls `entry_point(*args, **kwargs)` and returns each result as plain JSON; the comparison
      with `expect` happens here, by type-strict JSON equality (`1`, `1.0` and `true` differ;
      floats compare exactly; a tuple, a set or an object is not plain JSON and fails). Code that tampers with its own
      interpreter cannot make a wrong answer pass.
    - `tests`: Python source (a string, or a list run in order), e.g. asserts that call the
      entry point, or HumanEval's `def check(candidate): ...`. Weaker: the verdict is decided
      inside the untrusted process, so code that tampers with its interpreter (an object equal
      to everything, patched builtins) can pass. Use it only where a case cannot express the
      test (e.g. mutation of an argument, an exception to raise).

    `timeout` (seconds, default 10) bounds the wall time of the whole run. A hang, crash, fork
    bomb or memory blow-up fails the check; it never raises.
    """
    code = response_code(ctx)
    if not code.strip():
        return False, "expected Python code, found none", None
    if len(code) > MAX_CODE_CHARS:
        return False, f"expected Python code, found {len(code):,} characters (too long)", None
    timeout = float(c.get("timeout", DEFAULT_TIMEOUT))
    name = c["entry_point"]
    if "cases" in c:
        calls = [{"args": k.get("args", []), "kwargs": k.get("kwargs", {})} for k in c["cases"]]
        res = run_calls(code, name, calls, timeout)
        if res.ok:
            return _judge_cases(name, c["cases"], res.results or [])
    else:
        tests = c["tests"] if isinstance(c["tests"], list) else [c["tests"]]
        res = run_tests(code, tests, name, timeout)
        if res.ok:
            return True, "", None
    return False, f"expected the tests to pass; {res.reason}", {"timed_out": res.timed_out}
