"""Verify-and-revise: answer, judge the answer with the checker, ask again with its reasons.

```python
from rsi_hub.serving import LocalGenerator, revise

result = revise(LocalGenerator.load("runs/LA2b200s"), [{"role": "user", "content": prompt}],
                max_rounds=3)
result.answer            # the best answer (most checks passed; ties go to the earliest)
result.rounds[0].verdict # the first (plain served) answer's verdict, then one per revision
result.completion_tokens # tokens generated over every round
```

The first round is plain serving: the conversation as given, greedy. Each later round appends
the previous answer and a user turn listing the checker's failed checks as actionable sentences
(`rsi_hub.serving.feedback`), so the model sees what it wrote and what to change. The loop stops
at the first answer that passes every check or after `max_rounds` answers.

This is NOT the served configuration: an evaluation of it is its own protocol (`rsi-hub eval
--revise K`, meta `served_configuration: false`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from rsi_hub.checker import Verdict, check, validate_checks
from rsi_hub.errors import ConfigError
from rsi_hub.serving.constraints import extract_specs
from rsi_hub.serving.feedback import revision_request

Message = dict[str, str]
Spec = dict[str, Any]


@dataclass(frozen=True)
class Generation:
    """One generated answer and what it cost, in the model's tokens."""

    text: str
    prompt_tokens: int
    completion_tokens: int


#: Anything that answers a conversation: in-process (`LocalGenerator`), an OpenAI-compatible
#: endpoint (`OpenAIGenerator`), or a function of your own.
Generate = Callable[[list[Message]], Generation]


@dataclass(frozen=True)
class Round:
    """One answer of the loop and the checker's verdict on it.

    Attributes:
        index: 0 for the first (plain) answer, then 1, 2, … for each revision.
        request: the user turn that asked for this revision (None for the first answer).
        answer: the model's answer.
        verdict: the checker's verdict on `answer` against the checks.
        prompt_tokens / completion_tokens: what this round's generation read and wrote.
    """

    index: int
    request: str | None
    answer: str
    verdict: Verdict
    prompt_tokens: int
    completion_tokens: int

    @property
    def checks_passed(self) -> int:
        """How many checks this answer passed."""
        return sum(result.passed for result in self.verdict.results)

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict (the verdict as `Verdict.to_dict`)."""
        return {
            "index": self.index,
            "request": self.request,
            "answer": self.answer,
            "verdict": self.verdict.to_dict(),
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
        }


@dataclass
class ReviseResult:
    """Every round of one verify-and-revise loop and which answer it keeps.

    Attributes:
        checks: the checks every answer was judged on.
        extracted: True when they were found in the prompt (no checks were given).
        rounds: every answer, in order.
        best_index: the kept answer's index in `rounds`.
    """

    checks: list[Spec]
    extracted: bool
    rounds: list[Round] = field(default_factory=list)
    best_index: int = 0

    @property
    def best(self) -> Round:
        """The kept round."""
        return self.rounds[self.best_index]

    @property
    def answer(self) -> str:
        """The kept answer."""
        return self.best.answer

    @property
    def passed(self) -> bool:
        """Whether the kept answer passes every check."""
        return self.best.verdict.passed

    @property
    def prompt_tokens(self) -> int:
        """Prompt tokens read over every round."""
        return sum(r.prompt_tokens for r in self.rounds)

    @property
    def completion_tokens(self) -> int:
        """Tokens generated over every round."""
        return sum(r.completion_tokens for r in self.rounds)

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict of the whole loop (what `rsi-hub eval --revise` logs per prompt)."""
        return {
            "checks": self.checks,
            "extracted": self.extracted,
            "best_index": self.best_index,
            "rounds": [r.to_json() for r in self.rounds],
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
        }


def _last_user_text(messages: Sequence[Mapping[str, Any]]) -> str:
    for message in reversed(messages):
        if message.get("role") == "user":
            content = message.get("content")
            return content if isinstance(content, str) else ""
    return ""


def revise(
    generate: Generate,
    messages: Sequence[Mapping[str, Any]],
    checks: Sequence[Mapping[str, Any]] | None = None,
    max_rounds: int = 3,
    *,
    on_round: Callable[[Round], None] | None = None,
) -> ReviseResult:
    """Answer `messages`, judge each answer with the checker, and ask for revisions on failure.

    Args:
        generate: answers a conversation (a list of `{"role", "content"}` dicts) with a
            `Generation` (text and token counts).
        messages: the conversation; the last user turn is the request.
        checks: checker specs to hold the answers to. None: extract them from the last user turn
            with the rule-based extractor (`rsi_hub.serving.extract_specs`). With no checks at
            all there is nothing to verify and the first answer is returned.
        max_rounds: the most answers to generate, the first one included (1 = plain serving).
        on_round: called with each round as soon as it is judged (the Space shows them live).

    Returns:
        A `ReviseResult`: every round, and the best answer (most checks passed; ties go to the
        earliest, so a revision must do strictly better to replace an answer).

    Raises:
        ConfigError: `max_rounds` < 1. CheckError: a given check is malformed (before any
        generation). Whatever `generate` raises (e.g. `GenerationError`).
    """
    if max_rounds < 1:
        raise ConfigError(
            f"max_rounds must be at least 1 (1 = plain serving), got {max_rounds}.",
            field="max_rounds",
        )
    extracted = checks is None
    specs = (
        extract_specs(_last_user_text(messages)) if checks is None else [dict(c) for c in checks]
    )
    validate_checks(specs)
    conversation: list[Message] = [dict(m) for m in messages]
    result = ReviseResult(specs, extracted)
    request: str | None = None
    for index in range(max_rounds):
        generation = generate(conversation)
        verdict = check(generation.text, specs)
        current = Round(
            index,
            request,
            generation.text,
            verdict,
            generation.prompt_tokens,
            generation.completion_tokens,
        )
        result.rounds.append(current)
        if current.checks_passed > result.best.checks_passed:
            result.best_index = index
        if on_round is not None:
            on_round(current)
        if verdict.passed or not specs or index + 1 == max_rounds:
            break
        failures = [(s, r) for s, r in zip(specs, verdict.results, strict=True) if not r.passed]
        request = revision_request(failures)
        conversation += [
            {"role": "assistant", "content": generation.text},
            {"role": "user", "content": request},
        ]
    return result
