"""How each generated answer ended, measured from the generated token ids.

lm-eval hands a task only the decoded answer text, with special tokens removed, so a task cannot
see whether the model closed its turn or ran into the token limit. rsi-hub's own lm-eval model
classes (`rsi_hub.evaluate.models`) read that from the token ids they generated and record it here,
keyed by document; the EV4 task's `process_results` looks it up. A plain `lm_eval --model hf` run
records nothing, and the task falls back to re-tokenising the answer (see `harness`).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from rsi_hub.chat import EOS_TOKEN, IM_END_TOKEN, SPECIAL_TOKEN_IDS

StopReason = Literal["eot", "eos", "stop_string", "length"]

_EOT_ID = SPECIAL_TOKEN_IDS[IM_END_TOKEN]
_EOS_ID = SPECIAL_TOKEN_IDS[EOS_TOKEN]


@dataclass(frozen=True)
class GenerationFacts:
    """How one answer ended.

    Attributes:
        tokens: answer length in generated tokens, not counting the stop token.
        stop: "eot" (<|im_end|>), "eos" (</s>, which the serving contract also stops on),
            "stop_string" (the text "<|im_end|>" spelled out of ordinary tokens, which lm-eval's
            string criterion stops on), or "length" (ran into the token limit).
    """

    tokens: int
    stop: StopReason

    @property
    def stopped(self) -> bool:
        """True when the answer ended on its own before the limit."""
        return self.stop != "length"


def facts_from_token_ids(generated: Sequence[int], max_new_tokens: int) -> GenerationFacts:
    """Facts of one answer from the token ids generated after the prompt.

    `generated` may carry padding after the stop token (batched generation pads finished rows);
    everything after the first stop id is ignored. A row with no stop id that is shorter than
    `max_new_tokens` was ended by lm-eval's stop-string criterion.
    """
    for position, token in enumerate(generated):
        if token == _EOT_ID:
            return GenerationFacts(position, "eot")
        if token == _EOS_ID:
            return GenerationFacts(position, "eos")
    if len(generated) >= max_new_tokens:
        return GenerationFacts(len(generated), "length")
    return GenerationFacts(len(generated), "stop_string")


def doc_key(doc: dict[str, Any]) -> str:
    """The registry key of a document: its content (identical prompts give identical answers)."""
    return json.dumps(doc, sort_keys=True, ensure_ascii=False, default=str)


_REGISTRY: dict[str, GenerationFacts] = {}


def clear() -> None:
    """Forget every recorded answer (called at the start of each batch of generations)."""
    _REGISTRY.clear()


def record(doc: dict[str, Any], facts: GenerationFacts) -> None:
    """Remember how the answer to `doc` ended."""
    _REGISTRY[doc_key(doc)] = facts


def lookup(doc: dict[str, Any]) -> GenerationFacts | None:
    """How the answer to `doc` ended, or None when no rsi-hub model class generated it."""
    return _REGISTRY.get(doc_key(doc))
