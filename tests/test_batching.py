"""`rsi_hub.batching.batched`, shared by data preparation and synthesis."""

from __future__ import annotations

from rsi_hub.batching import batched


def test_batched_keeps_order_and_a_short_last_batch() -> None:
    assert list(batched(iter(range(7)), 3)) == [[0, 1, 2], [3, 4, 5], [6]]
    assert list(batched(range(6), 3)) == [[0, 1, 2], [3, 4, 5]]
    assert list(batched([], 4)) == []
