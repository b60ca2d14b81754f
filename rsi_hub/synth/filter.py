"""The verifier filter: judge one generation with the checker and keep it only on an exact pass."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from rsi_hub.chat import STOP_TEXTS, served_messages
from rsi_hub.suites.answers import extract_final
from rsi_hub.suites.prompts import PoolPrompt
from rsi_hub.synth.backends import Generation
from rsi_hub.synth.prompts import Message, scaffold_messages, training_messages

# lensyn generates under the scaffold and keeps what follows FINAL:; rft generates as served
# and keeps the whole reply. Both keep rows in the served form (k0, prompt, answer).
MODES = ("lensyn", "rft")
KEPT = "kept"
REJECTED = "rejected"

# check(response, constraints) -> verdict with .passed and .results[i].{type, passed, reason}
Judge = Callable[[str, Sequence[Mapping[str, Any]]], Any]


def default_judge() -> Judge:
    """The project's one checker (`rsi_hub.checker.check`)."""
    from rsi_hub.checker import check

    return check


def checker_version() -> str:
    """The checker's semantics version, recorded with every data set it filtered."""
    from rsi_hub.checker import CHECKER_VERSION

    return str(CHECKER_VERSION)


def generation_messages(prompt: PoolPrompt, mode: str) -> list[Message]:
    """The conversation a sample of `prompt` is generated from in `mode`."""
    if mode == "lensyn":
        return scaffold_messages(prompt)
    if mode == "rft":
        return served_messages(prompt.prompt)
    raise ValueError(f"unknown synthesis mode {mode!r}; choose one of {MODES}")


def judge_answer(
    prompt: PoolPrompt, sample: int, answer: str, judge: Judge, n_tokens: int = 0
) -> tuple[dict[str, Any], bool]:
    """The ledger entry of an extracted answer, and whether every check passed."""
    verdict = judge(answer, list(prompt.checks))
    checks = [
        {"type": r.type, "passed": bool(r.passed), **({} if r.passed else {"reason": r.reason})}
        for r in verdict.results
    ]
    passed = bool(verdict.passed)
    entry = {
        "prompt_id": prompt.id,
        "sample": sample,
        "status": KEPT if passed else REJECTED,
        "checks": checks,
        "n_tokens": n_tokens,
    }
    return entry, passed


def judge_generation(
    prompt: PoolPrompt, sample: int, generation: Generation, *, mode: str, judge: Judge
) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """Judge one generation.

    Returns:
        Its ledger entry, and its training row when it is kept (an exact pass on every check),
        else None. A malformed generation gets a ledger entry whose status says why.
    """
    extraction = extract_final(
        generation.text,
        require_marker=mode == "lensyn",
        stop_texts=STOP_TEXTS,
        truncated=generation.truncated,
    )
    if extraction.answer is None:
        entry = {
            "prompt_id": prompt.id,
            "sample": sample,
            "status": str(extraction.malformed),
            "checks": [],
            "n_tokens": generation.n_tokens,
        }
        return entry, None
    entry, passed = judge_answer(prompt, sample, extraction.answer, judge, generation.n_tokens)
    return entry, (training_row(prompt, sample, extraction.answer) if passed else None)


def training_row(prompt: PoolPrompt, sample: int, answer: str) -> dict[str, Any]:
    """A kept row: the ChatML conversation (k0, prompt, bare answer) plus its sample key."""
    return {"prompt_id": prompt.id, "sample": sample, "messages": training_messages(prompt, answer)}
