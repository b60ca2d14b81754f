"""Answer extraction: the final answer of a generation, or why it is malformed.

Owned by the suites (DESIGN.md): synth's filter and train's RL reward read answers the same
way. The stop strings to cut at are passed in (`rsi_hub.chat.STOP_TEXTS`), since the suites
do not depend on the chat package.

A malformed generation is counted and dropped, never an error: at pool scale some samples run
out of tokens, forget the marker or print nothing, and one of them must not stop a run.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum

FINAL_MARKER = "FINAL:"
# The marker at the start of a line, tolerating the markdown a model tends to wrap it in
# ("**FINAL:**", "> FINAL:", "## FINAL:"). Character classes only: linear time, no backtracking
# blow-up on hostile text.
_MARKER_RE = re.compile(r"^[ \t>*_#]*FINAL:[*_]*[ \t]*", re.MULTILINE)


class Malformed(StrEnum):
    """Why a generation was dropped before the checker saw it."""

    NO_MARKER = "no_marker"  # lensyn only: no line starts with FINAL:
    EMPTY = "empty"  # nothing (after the marker) but white space
    OVER_LONG = "over_long"  # hit max_new_tokens without a stop token: the answer may be cut


@dataclass(frozen=True)
class Extraction:
    """The final answer of one generation, or why there is none."""

    answer: str | None
    malformed: Malformed | None = None


def _strip_stop_text(text: str, stop_texts: Sequence[str]) -> str:
    # Backends decode without special tokens; a stop token left as text (a tokenizer that does
    # not mark it special) must not end up in a training target.
    for stop in stop_texts:
        cut = text.find(stop)
        if cut != -1:
            text = text[:cut]
    return text


def extract_final(
    text: str, *, require_marker: bool, stop_texts: Sequence[str], truncated: bool = False
) -> Extraction:
    """The bare final answer of a generation.

    Args:
        text: the decoded completion.
        require_marker: lensyn (true) keeps only what follows the last line-initial `FINAL:`
            marker; rft (false) keeps the whole completion.
        stop_texts: stop tokens as text (`rsi_hub.chat.STOP_TEXTS`): the answer ends at the
            first one found.
        truncated: the backend stopped at `max_new_tokens` rather than on a stop token.

    Returns:
        The stripped answer, or `answer=None` with the reason it is malformed.
    """
    if truncated:
        return Extraction(None, Malformed.OVER_LONG)
    text = _strip_stop_text(text, stop_texts)
    if require_marker:
        # The last marker wins: a draft may announce "FINAL:" before the revision is done.
        last = None
        for last in _MARKER_RE.finditer(text):  # noqa: B007 - we want the last match
            pass
        if last is None:
            return Extraction(None, Malformed.NO_MARKER)
        text = text[last.end() :]
    answer = text.strip()
    if not answer:
        return Extraction(None, Malformed.EMPTY)
    return Extraction(answer)
