"""Assistant-only loss masks computed from the served chat template, without `{% generation %}`.

The served template stays free of TRL's `{% generation %}` markers (other renderers do not know
them). Instead each conversation is rendered with `rsi_hub.chat.render` prefix by prefix: the
text between "everything before assistant turn i, plus the generation prompt" and the
`<|im_end|>` that closes turn i is that turn's answer. Each answer and its `<|im_end|>` are
supervised; system, user and template tokens (the generation prompt, the newline after
`<|im_end|>`) are not.

Tokens are produced segment by segment at those boundaries: the prompt part exactly as the model
sees it at inference (the rendered prompt tokenised alone) and the answer after it. This equals
tokenising the whole text except where a tokenizer would merge characters across a turn boundary
(an answer starting with a newline), and there the segment form is the one inference produces.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from rsi_hub.chat import IM_END_TOKEN, load_system_prompt, render
from rsi_hub.errors import RsiHubError

SystemPolicy = Literal["keep", "k0", "none"]
SYSTEM_POLICIES: tuple[str, ...] = ("keep", "k0", "none")

Message = dict[str, Any]
Segment = tuple[str, bool]


class TemplateMaskError(RsiHubError):
    """The chat template did not render a conversation's prefixes as prefixes of the whole."""


def apply_system_policy(messages: list[Message], system: SystemPolicy) -> list[Message]:
    """Apply a recipe's system-message policy to one conversation.

    `keep`: the conversation's own system message if it has one, else none at all.
    `k0`: the served system prompt k0 replaces (or is inserted as) the system message.
    `none`: system messages are removed.
    """
    body = messages[1:] if messages and messages[0]["role"] == "system" else list(messages)
    if system == "keep":
        return list(messages)
    if system == "k0":
        return [{"role": "system", "content": load_system_prompt()}, *body]
    if system == "none":
        return body
    raise ValueError(f"system policy must be one of {SYSTEM_POLICIES}, got {system!r}")


def conversation_segments(messages: list[Message]) -> list[Segment]:
    """Split the rendered conversation into `(text, supervised)` segments.

    The messages are rendered as given: no default system prompt is inserted (apply a system
    policy first). Joining the texts gives exactly `render(messages, add_generation_prompt=False,
    use_default_system_prompt=False)`; the supervised texts are each assistant answer followed
    by `<|im_end|>`.

    Raises:
        TemplateMaskError: a rendered prefix is not a prefix of the whole conversation.
    """
    full = render(messages, add_generation_prompt=False, use_default_system_prompt=False)
    segments: list[Segment] = []
    cursor = 0
    for i, message in enumerate(messages):
        if message["role"] != "assistant":
            continue
        prompt = render(messages[:i], add_generation_prompt=True, use_default_system_prompt=False)
        through = render(
            messages[: i + 1], add_generation_prompt=False, use_default_system_prompt=False
        )
        end = through.rfind(IM_END_TOKEN) + len(IM_END_TOKEN)
        if not (
            full.startswith(prompt) and full.startswith(through) and cursor <= len(prompt) < end
        ):
            raise TemplateMaskError(
                f"assistant turn {i}: the chat template does not render this conversation's "
                "prefixes as prefixes of the whole, so the answer span cannot be located"
            )
        segments.append((full[cursor : len(prompt)], False))
        segments.append((full[len(prompt) : end], True))
        cursor = end
    segments.append((full[cursor:], False))
    return [(text, supervised) for text, supervised in segments if text]


@dataclass(frozen=True)
class TokenisedRow:
    """One tokenised conversation: token ids and a 0/1 mask of the supervised tokens."""

    input_ids: list[int]
    assistant_masks: list[int]

    @property
    def supervised(self) -> int:
        """How many tokens carry loss."""
        return sum(self.assistant_masks)


def tokenise_segments(tokenizer: Any, conversations: list[list[Segment]]) -> list[TokenisedRow]:
    """Tokenise many segmented conversations in one batched tokenizer call.

    No special tokens are added (the template writes them as text); every segment is tokenised
    on its own and the pieces are concatenated, the mask following the segment flags.
    """
    flat = [text for segments in conversations for text, _ in segments]
    encoded = tokenizer(flat, add_special_tokens=False)["input_ids"] if flat else []
    rows: list[TokenisedRow] = []
    position = 0
    for segments in conversations:
        ids: list[int] = []
        mask: list[int] = []
        for _, supervised in segments:
            piece = encoded[position]
            position += 1
            ids.extend(piece)
            mask.extend([int(supervised)] * len(piece))
        rows.append(TokenisedRow(ids, mask))
    return rows


def tokenise_conversation(
    tokenizer: Any, messages: list[Message], system: SystemPolicy = "keep"
) -> TokenisedRow:
    """Tokenise one conversation with its assistant mask (the system policy applied first)."""
    return tokenise_segments(
        tokenizer, [conversation_segments(apply_system_policy(messages, system))]
    )[0]
