"""The RLVR reward: the project's one checker, scored per completion.

reward = pass_weight * (every check passed) + fraction_weight * (fraction of checks passed)

The 0/1 term is what evaluation counts; the fraction term gives a gradient on prompts where no
completion of a group passes everything yet (GRPO's advantage is zero for a group of equal
rewards). An empty reply scores 0.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from rsi_hub.chat import STOP_TEXTS
from rsi_hub.suites.answers import extract_final

# check(response, constraints) -> verdict with .passed and .results[i].passed
Judge = Callable[[str, Sequence[Mapping[str, Any]]], Any]


def completion_text(completion: Any) -> str:
    """The text of a TRL completion: a string, or a conversational `[{"role", "content"}]`."""
    if isinstance(completion, str):
        return completion
    if isinstance(completion, list) and completion:
        content = completion[-1].get("content", "")
        return content if isinstance(content, str) else ""
    return ""


class CheckerReward:
    """A TRL reward function (`reward_funcs=[CheckerReward()]`) backed by the checker.

    TRL calls it with the batch's `completions` and every dataset column as a keyword argument;
    it reads the `checks_json` column (the prompt's constraints as JSON, because Arrow cannot
    hold a list of differently shaped dicts).
    """

    def __init__(
        self, pass_weight: float = 1.0, fraction_weight: float = 0.5, judge: Judge | None = None
    ) -> None:
        # TRL logs each reward function under its __name__ (rewards/checker/mean).
        self.__name__ = "checker"
        self.pass_weight = pass_weight
        self.fraction_weight = fraction_weight
        self._judge = judge

    @property
    def judge(self) -> Judge:
        """The checker, `rsi_hub.checker.check` (imported on first use)."""
        if self._judge is None:
            from rsi_hub.checker import check

            self._judge = check
        return self._judge

    def score(self, text: str, checks: Sequence[dict[str, Any]]) -> float:
        """The reward of one completion against its prompt's checks."""
        answer = extract_final(text, require_marker=False, stop_texts=STOP_TEXTS).answer
        if answer is None:
            # An empty reply satisfies every "absence" check (no_word, no_char, word_max...):
            # rewarding it would teach the policy to say nothing.
            return 0.0
        verdict = self.judge(answer, list(checks))
        results = list(verdict.results)
        fraction = sum(bool(r.passed) for r in results) / len(results) if results else 0.0
        return self.pass_weight * float(bool(verdict.passed)) + self.fraction_weight * fraction

    def __call__(
        self,
        prompts: Sequence[Any],
        completions: Sequence[Any],
        checks_json: Sequence[str],
        **_: Any,
    ) -> list[float]:
        """One reward per completion, in order."""
        return [
            self.score(completion_text(c), json.loads(cj))
            for c, cj in zip(completions, checks_json, strict=True)
        ]
