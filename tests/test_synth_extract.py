"""FINAL: extraction and malformed-generation classification."""

from __future__ import annotations

import pytest

from rsi_hub.chat import STOP_TEXTS
from rsi_hub.suites.answers import Malformed, extract_final


@pytest.mark.parametrize(
    ("text", "answer"),
    [
        ("draft\ncount: 3\nFINAL: one two three", "one two three"),
        ("FINAL: first try\nrevised\nFINAL: second try\n", "second try"),
        ("**FINAL:** bold marker", "bold marker"),
        ("## FINAL:\nOn the next line.\n\nTwo paragraphs.", "On the next line.\n\nTwo paragraphs."),
        ("FINAL: stops here<|im_end|>junk", "stops here"),
    ],
)
def test_lensyn_keeps_only_what_follows_the_last_marker(text: str, answer: str) -> None:
    assert extract_final(text, require_marker=True, stop_texts=STOP_TEXTS).answer == answer


@pytest.mark.parametrize(
    ("text", "truncated", "reason"),
    [
        ("no marker at all", False, Malformed.NO_MARKER),
        ("the FINAL: marker mid-line does not count", False, Malformed.NO_MARKER),
        ("FINAL:   \n  ", False, Malformed.EMPTY),
        ("", False, Malformed.NO_MARKER),
        ("FINAL: cut off mid", True, Malformed.OVER_LONG),
    ],
)
def test_lensyn_malformed(text: str, truncated: bool, reason: Malformed) -> None:
    extraction = extract_final(
        text, require_marker=True, stop_texts=STOP_TEXTS, truncated=truncated
    )
    assert extraction.answer is None
    assert extraction.malformed is reason


def test_rft_keeps_the_whole_reply() -> None:
    assert (
        extract_final("  A whole reply.\n", require_marker=False, stop_texts=STOP_TEXTS).answer
        == "A whole reply."
    )
    assert (
        extract_final(" \n", require_marker=False, stop_texts=STOP_TEXTS).malformed
        is Malformed.EMPTY
    )
    assert (
        extract_final("x", require_marker=False, stop_texts=STOP_TEXTS, truncated=True).malformed
        is Malformed.OVER_LONG
    )


def test_hostile_text_is_linear() -> None:
    # Many near-markers must not blow up the marker search.
    text = ("*" * 50_000 + "FINA\n") * 20
    assert (
        extract_final(text, require_marker=True, stop_texts=STOP_TEXTS).malformed
        is Malformed.NO_MARKER
    )
