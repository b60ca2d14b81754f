"""`batched`: consecutive lists of an iterable's items (`itertools.batched` is Python 3.12+).

A leaf module (imports nothing of rsi_hub), shared by data preparation and synthesis.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import TypeVar

T = TypeVar("T")


def batched(items: Iterable[T], size: int) -> Iterator[list[T]]:
    """Lists of `size` (at least 1) consecutive items, the last one shorter when they run out."""
    batch: list[T] = []
    for item in items:
        batch.append(item)
        if len(batch) == size:
            yield batch
            batch = []
    if batch:
        yield batch
