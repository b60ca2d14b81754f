"""The holdout guard of card section 2: no evaluation prompt ever reaches training data.

Two rules. Input files named `prompts*.jsonl` are refused outright (`sources.refuse_holdout_files`).
And every row whose user prompt matches a holdout suite prompt (IF-818, IF263, IF-3k), exactly
after normalisation or as a near-duplicate, is dropped and counted. The matching itself belongs
to `rsi_hub.suites` (one implementation, shared with evaluation and synthesis); the guard accepts
any object with a `match(prompt) -> holdout id | None` method, so tests can pass a small index.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import Protocol, runtime_checkable

from rsi_hub.errors import HoldoutInputError, RsiHubError

# How many matched holdout ids prep keeps in its stats as examples.
MAX_REPORTED_MATCHES = 20


@runtime_checkable
class PromptMatcher(Protocol):
    """Anything that says whether a prompt is (nearly) a holdout prompt."""

    def match(self, prompt: str) -> str | None:
        """The id of the holdout prompt `prompt` matches, or `None`."""
        ...


class HoldoutGuard:
    """Drops conversations whose user turns match a holdout prompt, and counts what it drops.

    Args:
        matcher: the holdout index (`rsi_hub.suites.HoldoutIndex` in production).
        name: how the guard is recorded in stats and evidence.
    """

    def __init__(self, matcher: PromptMatcher, name: str | None = None) -> None:
        if not isinstance(matcher, PromptMatcher):
            raise TypeError(f"{matcher!r} has no match(prompt) method")
        self.matcher = matcher
        self.name = name or type(matcher).__qualname__
        self.dropped: Counter[str] = Counter()
        self.matched_ids: list[str] = []

    def holdout_id(self, user_prompts: Iterable[str]) -> str | None:
        """The holdout id matched by any of `user_prompts`, or `None` if none matches."""
        for prompt in user_prompts:
            found = self.matcher.match(prompt)
            if found is not None:
                return found
        return None

    def admit(self, source: str, user_prompts: Iterable[str]) -> bool:
        """True to keep a row of `source`; false (and counted) when it matches a holdout prompt."""
        found = self.holdout_id(user_prompts)
        if found is None:
            return True
        self.dropped[source] += 1
        if len(self.matched_ids) < MAX_REPORTED_MATCHES:
            self.matched_ids.append(found)
        return False

    def report(self) -> dict[str, object]:
        """What the guard did, for `stats.json` and `training_evidence.json`."""
        return {
            "guard": self.name,
            "dropped": sum(self.dropped.values()),
            "dropped_by_source": dict(self.dropped),
            "matched_ids_sample": list(self.matched_ids),
        }


def default_holdout_matcher() -> PromptMatcher:
    """The production holdout index over every internal suite (IF-818, IF263, IF-3k).

    `rsi_hub.suites.holdout_index()`: exact match after `normalize_prompt`, or a near-duplicate
    (word 8-gram overlap of at least half the smaller prompt), built once per process.

    Raises:
        HoldoutInputError: `rsi_hub.suites` or its suite files are not available, so the guard
            cannot run; prep never silently trains without it (pass an explicit matcher, or
            disable the guard knowingly with `--no-holdout-guard`, which is recorded in the stats).
    """
    try:
        from rsi_hub.suites import holdout_index

        return holdout_index()
    except (ImportError, RsiHubError) as err:
        raise HoldoutInputError(
            f"the holdout guard needs the suite index of rsi_hub.suites, which is not available ({err}); "
            "prep refuses to run without it unless --no-holdout-guard is given"
        ) from err
