"""Holdout matching: is a prompt one of the held-out suite prompts, or a light edit of one?

Data preparation and synthetic generation call `HoldoutIndex.match` on every candidate prompt;
`audit` runs the same test between every pair of pool, IF-818, IF263 and IF-3k.

Definitions (stated once, used everywhere):

- `normalize_prompt(text)`: Unicode NFKC, case folding, curly quotes straightened, then the
  word tokens (runs of letters, digits and underscores) joined by single spaces. Punctuation and
  white space differences therefore never hide a copy.
- exact match: equal normalised text.
- near-duplicate: the two prompts' sets of word 8-grams (over the normalised tokens) overlap in
  at least `NEAR_DUP_THRESHOLD` = 0.5 of the smaller set, |A ∩ B| / min(|A|, |B|) >= 0.5. Taking
  the smaller set catches a held-out prompt pasted inside a longer one as well as a light edit.
  A prompt of fewer than 8 tokens has one gram, itself, so it only matches exactly.

The index maps each 8-gram to the prompts that hold it, so a query costs its own gram count plus
the postings it hits, never a scan of every held-out prompt.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

NGRAM = 8
NEAR_DUP_THRESHOLD = 0.5
_QUOTES = str.maketrans({"‘": "'", "’": "'", "‚": "'", "“": '"', "”": '"', "„": '"'})
_TOKEN = re.compile(r"\w+")


def normalize_prompt(text: str) -> str:
    """The canonical form used for exact holdout matching (see the module docstring)."""
    text = unicodedata.normalize("NFKC", text).translate(_QUOTES).casefold()
    return " ".join(_TOKEN.findall(text))


def ngrams(text: str, n: int = NGRAM) -> set[str]:
    """The set of word n-grams of the normalised text (the whole text if it is shorter)."""
    tokens = normalize_prompt(text).split()
    if len(tokens) < n:
        return {" ".join(tokens)} if tokens else set()
    return {" ".join(tokens[i : i + n]) for i in range(len(tokens) - n + 1)}


@dataclass(frozen=True)
class Match:
    """A held-out prompt that a query matches: its id and the 8-gram overlap (1.0 if exact)."""

    id: str
    overlap: float
    exact: bool


class HoldoutIndex:
    """An 8-gram index over held-out prompts; `match(prompt)` returns a matching holdout id."""

    def __init__(self, items: Iterable[tuple[str, str]] = ()) -> None:
        self._ids: list[str] = []
        self._sizes: list[int] = []
        self._exact: dict[str, int] = {}
        self._postings: dict[str, list[int]] = {}
        for item_id, prompt in items:
            self.add(item_id, prompt)

    def __len__(self) -> int:
        return len(self._ids)

    def add(self, item_id: str, prompt: str) -> None:
        """Index one held-out prompt under `item_id`."""
        slot = len(self._ids)
        grams = ngrams(prompt)
        self._ids.append(item_id)
        self._sizes.append(len(grams))
        self._exact.setdefault(normalize_prompt(prompt), slot)
        for gram in grams:
            self._postings.setdefault(gram, []).append(slot)

    def matches(self, prompt: str, threshold: float = NEAR_DUP_THRESHOLD) -> list[Match]:
        """Every indexed prompt that `prompt` matches, best first."""
        found: dict[int, Match] = {}
        exact = self._exact.get(normalize_prompt(prompt))
        if exact is not None:
            found[exact] = Match(self._ids[exact], 1.0, True)
        grams = ngrams(prompt)
        if grams:
            shared: Counter[int] = Counter()
            postings = self._postings
            for gram in grams:
                posting = postings.get(gram)
                if posting:
                    shared.update(posting)
            # Hot loop (every candidate of every query): plain comparisons, no min() calls.
            size_q, sizes = len(grams), self._sizes
            for slot, count in shared.items():
                size = sizes[slot]
                smaller = size_q if size_q < size else size
                if count >= threshold * smaller and slot not in found:
                    found[slot] = Match(self._ids[slot], count / smaller, False)
        return sorted(found.values(), key=lambda m: (-m.overlap, m.id))

    def match(self, prompt: str) -> str | None:
        """The id of the best-matching held-out prompt (exact or near-duplicate), else None."""
        best = self.matches(prompt)
        return best[0].id if best else None

    @classmethod
    def from_suites(cls, names: Iterable[str] = ("if818", "if263", "if3k")) -> HoldoutIndex:
        """An index over the committed held-out suites (loaded and hash-verified)."""
        from rsi_hub.suites.files import load_suite  # files imports the checker; keep it lazy

        return cls((row["id"], row["prompt"]) for name in names for row in load_suite(name))
