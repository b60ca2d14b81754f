"""The checker's core: result types, the registry of check types, validation and `check()`.

Every check type is one pure function registered here with a parameter schema (IFEval's
instructions_registry, but with typed, validated parameters). `check()` validates every
constraint first, so a malformed constraint raises `CheckError` before any response is judged,
then judges the response against each constraint through one shared `Context`, so per-response
work (strip, split, normalisation, sentence segmentation, JSON parsing) is done at most once.
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from rsi_hub.checker.context import Context
from rsi_hub.checker.params import KINDS, MISSING

#: Version of the checker's semantics. Bumped whenever a verdict can change for some input, so
#: that stored evaluation numbers can say which checker judged them.
CHECKER_VERSION = "1.1"


class CheckError(ValueError):
    """A constraint is malformed: unknown type, missing, mistyped or unknown parameter, n < 0.

    Raised by `check()` and `validate_checks()` before any response is judged. The message names
    the constraint's index and type, what is wrong and how to fix it; the same facts are
    available as attributes for programs (`index`, `check_type`, `param`).
    """

    def __init__(
        self, message: str, *, index: int, check_type: str | None = None, param: str | None = None
    ) -> None:
        super().__init__(message)
        self.index = index
        self.check_type = check_type
        self.param = param


@dataclass(slots=True)
class CheckResult:
    """The verdict on one constraint.

    `type` is the constraint's type, `passed` the verdict, `reason` is "" when passed and else a
    short human sentence stating the expectation and what was found. `detail` carries the same
    facts structurally for programs (e.g. `{"expected": 50, "got": 48, "delta": -2}` for the
    count checks), so that failure analysis never has to parse reason strings. Treat it as
    read-only.
    """

    type: str
    passed: bool
    reason: str = ""
    detail: dict[str, Any] | None = None


@dataclass(slots=True)
class Verdict:
    """The verdict on a response: `passed` is True only if every constraint passed.

    `results` holds one `CheckResult` per constraint, in the order the constraints were given.
    An empty constraint list passes (nothing was asked).
    """

    passed: bool
    results: list[CheckResult] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict: `{"passed", "results": [{"type", "passed", "reason", "detail"}]}`."""
        return {
            "passed": self.passed,
            "results": [
                {"type": r.type, "passed": r.passed, "reason": r.reason, "detail": r.detail}
                for r in self.results
            ],
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Verdict:
        """Rebuild a verdict stored with `to_dict()` (e.g. from per-sample evaluation logs)."""
        results = [
            CheckResult(r["type"], bool(r["passed"]), r.get("reason", ""), r.get("detail"))
            for r in d["results"]
        ]
        return cls(bool(d["passed"]), results)


# A check function judges the shared context against one (already validated) constraint and
# returns (passed, reason, detail). It must be pure and must never raise on any response text.
CheckFn = Callable[[Context, Mapping[str, Any]], tuple[bool, str, dict[str, Any] | None]]

_MISSING = MISSING


@dataclass(frozen=True, slots=True)
class Param:
    """One parameter of a check type: its name, its kind (a key of `params.KINDS`), and whether
    it is needed.

    `example` is shown in error messages as the way to fix a missing or mistyped value.
    """

    name: str
    kind: str
    required: bool = True
    example: Any = None


@dataclass(frozen=True, slots=True)
class CheckType:
    """A registered check type: name, function, parameter schema and a one-line summary."""

    name: str
    fn: CheckFn
    params: tuple[Param, ...]
    summary: str
    allowed: frozenset[str]


#: type name -> CheckType. Filled by the check modules at import of `rsi_hub.checker`.
REGISTRY: dict[str, CheckType] = {}


def register(name: str, *params: Param, summary: str) -> Callable[[CheckFn], CheckFn]:
    """Decorator that registers `fn` as the check type `name` with the given parameters."""

    def deco(fn: CheckFn) -> CheckFn:
        if name in REGISTRY:
            raise RuntimeError(f"check type {name!r} registered twice")
        allowed = frozenset(["type", *(p.name for p in params)])
        REGISTRY[name] = CheckType(name, fn, tuple(params), summary, allowed)
        return fn

    return deco


def _show(v: Any, limit: int = 60) -> str:
    """A short JSON-ish rendering of a value for error messages."""
    try:
        s = json.dumps(v, ensure_ascii=False)
    except (TypeError, ValueError):
        try:
            s = repr(v)
        except ValueError:  # an int past 4300 digits has no str() or repr()
            s = f"<{type(v).__name__} too long to show>"
    return s if len(s) <= limit else s[: limit - 3] + "..."


def _example(ct: CheckType) -> str:
    obj: dict[str, Any] = {"type": ct.name}
    for p in ct.params:
        if p.required:
            obj[p.name] = p.example
    return json.dumps(obj, ensure_ascii=False)


def _validate_one(c: Any, index: int) -> CheckType:
    if type(c) is not dict and not isinstance(c, Mapping):
        raise CheckError(
            f"constraint {index}: expected an object such as "
            f'{{"type": "word_eq", "n": 50}}, got {_show(c)} ({type(c).__name__})',
            index=index,
        )
    name = c.get("type", _MISSING)
    if name is _MISSING:
        raise CheckError(
            f"constraint {index} {_show(c)}: missing 'type'; add one of: "
            + ", ".join(sorted(REGISTRY)),
            index=index,
        )
    ct = REGISTRY.get(name) if type(name) is str else None
    if ct is None:
        hint = ""
        if type(name) is str:
            close = difflib.get_close_matches(name, list(REGISTRY), n=1)
            if close:
                hint = f"; did you mean {close[0]!r}?"
        raise CheckError(
            f"constraint {index}: unknown type {_show(name)}{hint} "
            f"(known types: {', '.join(sorted(REGISTRY))})",
            index=index,
            check_type=name if type(name) is str else None,
        )
    for key in c:
        if key not in ct.allowed:
            takes = ", ".join(p.name for p in ct.params) or "no parameters"
            raise CheckError(
                f"constraint {index} ({name}): unknown parameter {_show(key)}; "
                f"{name} takes: {takes}; remove it or fix its spelling",
                index=index,
                check_type=name,
                param=str(key),
            )
    for p in ct.params:
        v = c.get(p.name, _MISSING)
        if p.kind == "int_ge0" and type(v) is int and v >= 0:
            continue  # the common case, decided without a call
        if v is _MISSING:
            if p.required:
                raise CheckError(
                    f"constraint {index} ({name}): missing parameter {p.name!r} "
                    f"({KINDS[p.kind](MISSING)}); add it, e.g. {_example(ct)}",
                    index=index,
                    check_type=name,
                    param=p.name,
                )
            continue
        problem = KINDS[p.kind](v)
        if problem is not None:
            raise CheckError(
                f"constraint {index} ({name}): parameter {p.name!r} must be {problem}, "
                f"got {_show(v)} ({type(v).__name__}); e.g. {_example(ct)}",
                index=index,
                check_type=name,
                param=p.name,
            )
    if name == "word_band" and c["lo"] > c["hi"]:
        raise CheckError(
            f"constraint {index} (word_band): 'lo' ({c['lo']}) is greater than 'hi' ({c['hi']}); "
            "swap them",
            index=index,
            check_type=name,
            param="lo",
        )
    if name == "code_tests" and ("tests" in c) == ("cases" in c):
        raise CheckError(
            f"constraint {index} (code_tests): give exactly one of 'cases' (preferred: the "
            "verdict is decided outside the tested code) or 'tests' (free-form asserts), e.g. "
            '{"type": "code_tests", "entry_point": "add", "cases": [{"args": [1, 2], '
            '"expect": 3}]}',
            index=index,
            check_type=name,
            param="cases",
        )
    return ct


def validate_checks(checks: Sequence[Mapping[str, Any]]) -> None:
    """Validate a list of constraints without judging anything; raise `CheckError` if malformed.

    Suite loaders call this to reject a bad row at load time. A constraint is malformed when it
    is not an object, its `type` is missing or unknown, a required parameter is missing, a
    parameter has the wrong type (a count must be a JSON integer >= 0: `50`, not `"50"`, `50.0`
    or `true`), or it has a parameter its type does not take.
    """
    _validate_all(checks)


def _validate_all(checks: Any) -> list[CheckType]:
    if type(checks) is list:
        return [_validate_one(c, i) for i, c in enumerate(checks)]
    if isinstance(checks, (str, bytes, Mapping)) or not isinstance(checks, Sequence):
        raise CheckError(
            f"checks must be a list of constraint objects, got {_show(checks)} "
            f"({type(checks).__name__}); wrap a single constraint in [ ]",
            index=-1,
        )
    return [_validate_one(c, i) for i, c in enumerate(checks)]


def check(response: str, checks: Sequence[Mapping[str, Any]]) -> Verdict:
    """Judge `response` against every constraint in `checks`; see `rsi_hub.checker` for semantics.

    Raises `CheckError` (before judging) if a constraint is malformed, and `TypeError` if
    `response` is not a `str`. Any `str` response, however long, malformed or hostile, is judged
    without raising: it simply fails the constraints it does not meet. Pure and deterministic
    (except `code_tests`, which runs code under a wall-clock limit).
    """
    types = _validate_all(checks)
    if type(response) is not str:
        if not isinstance(response, str):
            raise TypeError(f"response must be a str, got {type(response).__name__}")
        response = str(response)
    ctx = Context(response)
    results: list[CheckResult] = []
    all_passed = True
    for ct, c in zip(types, checks, strict=True):
        passed, reason, detail = ct.fn(ctx, c)
        if not passed:
            all_passed = False
        results.append(CheckResult(ct.name, passed, reason, detail))
    return Verdict(all_passed, results)


# Used by check modules to show found text in reasons without flooding a log line.
_WS = re.compile(r"\s+")


def clip(s: str, limit: int = 40) -> str:
    """Render `s` for a reason string: white space collapsed, cut to `limit` characters, quoted."""
    s = _WS.sub(" ", s[: limit * 4]).strip()
    if len(s) > limit:
        s = s[: limit - 3] + "..."
    return repr(s)


def plural(n: int, word: str) -> str:
    """`plural(1, "word")` -> "1 word"; `plural(2, "word")` -> "2 words"."""
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def count_result(
    expected_text: str, got: int, target: int, noun: str
) -> tuple[bool, str, dict[str, Any]]:
    """A failing count result: reason `expected <expected_text>, got <got> (<signed delta>)`."""
    delta = got - target
    return (
        False,
        f"expected {expected_text}, got {got} ({delta:+d})",
        {"expected": target, "got": got, "delta": delta, "unit": noun},
    )
