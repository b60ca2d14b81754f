"""A small seeded random source whose streams are stable across Python versions.

Suite files are committed and must regenerate byte for byte, so the generator never touches the
global `random` state and never relies on `hash()` of a string (randomised per process). Python
only guarantees that `random.Random(int).random()` reproduces the same floats for the same integer
seed; `choice`, `randrange`, `shuffle` and `sample` may change between releases. `Rng` therefore
derives its integer seed from SHA-256 of a key and builds every other draw from `random()` alone.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Sequence
from typing import TypeVar

T = TypeVar("T")


def stable_hash(*key: object) -> int:
    """A process-independent 64-bit hash of `key` (the parts are joined by a separator)."""
    text = "\x1f".join(str(part) for part in key)
    return int.from_bytes(hashlib.sha256(text.encode("utf-8")).digest()[:8], "big")


class Rng:
    """Seeded random draws; `Rng("suite", "if818", 12)` is the same stream in every process."""

    def __init__(self, *key: object) -> None:
        text = "\x1f".join(str(part) for part in key)
        seed = int.from_bytes(hashlib.sha256(text.encode("utf-8")).digest()[:16], "big")
        self._random = random.Random(seed)

    def random(self) -> float:
        """A float in [0, 1)."""
        return self._random.random()

    def below(self, n: int) -> int:
        """An integer in [0, n); n must be positive."""
        if n <= 0:
            raise ValueError("below() needs a positive bound")
        return min(int(self._random.random() * n), n - 1)

    def randint(self, lo: int, hi: int) -> int:
        """An integer in [lo, hi], both ends included."""
        return lo + self.below(hi - lo + 1)

    def chance(self, p: float) -> bool:
        """True with probability p."""
        return self._random.random() < p

    def choice(self, items: Sequence[T]) -> T:
        """One element of a non-empty sequence."""
        return items[self.below(len(items))]

    def weighted(self, items: Sequence[T], weights: Sequence[float]) -> T:
        """One element, drawn with the given non-negative weights."""
        total = float(sum(weights))
        x = self._random.random() * total
        for item, weight in zip(items, weights, strict=True):
            x -= weight
            if x < 0:
                return item
        return items[-1]

    def shuffle(self, items: list[T]) -> None:
        """Shuffle a list in place (Fisher-Yates)."""
        for i in range(len(items) - 1, 0, -1):
            j = self.below(i + 1)
            items[i], items[j] = items[j], items[i]

    def sample(self, items: Sequence[T], k: int) -> list[T]:
        """k distinct elements, in draw order."""
        pool = list(items)
        for i in range(k):
            j = i + self.below(len(pool) - i)
            pool[i], pool[j] = pool[j], pool[i]
        return pool[:k]
