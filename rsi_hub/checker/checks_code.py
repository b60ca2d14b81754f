"""The `code_tests` check: run the response's Python code against tests in the sandbox."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rsi_hub.checker.context import Context
from rsi_hub.checker.core import Param, register
from rsi_hub.checker.sandbox import DEFAULT_TIMEOUT, run_tests

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


@register(
    "code_tests",
    Param("entry_point", "identifier", example="add"),
    Param("tests", "tests", example="assert add(1, 2) == 3"),
    Param("timeout", "timeout", required=False, example=10),
    summary="the response's Python code passes the tests in a sandbox",
)
def code_tests(ctx: Context, c: Mapping[str, Any]) -> tuple[bool, str, dict[str, Any] | None]:
    """Passes when the response's code (see `response_code`) defines `entry_point` and every
    test runs without an exception, in a separate sandboxed process (see
    `rsi_hub.checker.sandbox`: time, memory, process and file limits, no network, a scratch
    directory). `tests` is Python source (a string, or a list run in order), e.g. asserts that
    call the entry point, or HumanEval's `def check(candidate): ...`. `timeout` (seconds,
    default 10) bounds the wall time of the whole run. A hang, crash, fork bomb or memory blow-up
    fails the check; it never raises.
    """
    code = response_code(ctx)
    if not code.strip():
        return False, "expected Python code, found none", None
    if len(code) > MAX_CODE_CHARS:
        return False, f"expected Python code, found {len(code):,} characters (too long)", None
    tests = c["tests"] if isinstance(c["tests"], list) else [c["tests"]]
    timeout = float(c.get("timeout", DEFAULT_TIMEOUT))
    res = run_tests(code, tests, c["entry_point"], timeout)
    if res.ok:
        return True, "", None
    return False, f"expected the tests to pass; {res.reason}", {"timed_out": res.timed_out}
