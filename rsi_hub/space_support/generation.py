"""Streaming greedy replies in the served configuration (what the Space runs).

The prompt is the model's own chat template (ChatML, k0 inserted when there is no system
message, thinking off); decoding is greedy and stops on `<|im_end|>` (id 11) or `</s>` (id 2);
the prompt may hold at most 8,192 tokens.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rsi_hub.chat import MAX_INPUT_TOKENS, STOP_TOKEN_IDS
from rsi_hub.errors import NotAModelFolderError, RsiHubError

DEFAULT_MAX_NEW_TOKENS = 1024


class InputTooLongError(RsiHubError):
    """The conversation is longer than the model's input limit; the message says what to do."""


@dataclass(frozen=True)
class ChatModel:
    """A loaded model and its tokenizer."""

    model_id: str
    model: Any
    tokenizer: Any


def require_model_folder(model_id: str | Path) -> None:
    """Refuse an existing local folder that is not a model folder (no `config.json`).

    transformers would go on to fail deep inside the tokenizer with advice about sentencepiece;
    the usual cause is a parent folder such as `runs/demo`, which holds `tiny/`, `sft/` and
    `release/`. A name that is not a local folder is left alone (a Hub repository id).

    Raises:
        NotAModelFolderError: naming the folder and the model folders inside it.
    """
    folder = Path(model_id)
    if not folder.is_dir() or (folder / "config.json").is_file():
        return
    inside = sorted(p.parent for p in folder.glob("*/config.json"))
    if inside:
        # The release is what the demo serves; prefer it in the suggestion when present.
        best = next((p for p in inside if p.name == "release"), inside[-1])
        hint = (
            f"pass one of the model folders inside it: {', '.join(str(p) for p in inside)} "
            f"(e.g. {best})"
        )
    else:
        hint = "pass a folder that holds config.json, the weights and the tokenizer files"
    raise NotAModelFolderError(
        f"{folder} is not a model folder (it has no config.json); {hint}, or a Hub repository id."
    )


def load_chat_model(model_id: str) -> ChatModel:
    """Load a model folder or Hub repository for chat (GPU when there is one, its own dtype).

    Raises:
        NotAModelFolderError: `model_id` is a local folder without `config.json`.
    """
    require_model_folder(model_id)
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    device = "cuda" if torch.cuda.is_available() else "cpu"
    tokenizer = AutoTokenizer.from_pretrained(model_id)
    model = AutoModelForCausalLM.from_pretrained(model_id, dtype="auto").to(device).eval()
    return ChatModel(model_id, model, tokenizer)


def prompt_ids(chat: ChatModel, messages: list[dict[str, Any]]) -> Any:
    """The token ids of the rendered prompt.

    Raises:
        InputTooLongError: the prompt exceeds MAX_INPUT_TOKENS.
    """
    text = chat.tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
    ids = chat.tokenizer(text, add_special_tokens=False, return_tensors="pt")["input_ids"]
    if ids.shape[1] > MAX_INPUT_TOKENS:
        raise InputTooLongError(
            f"Your conversation is {ids.shape[1]:,} tokens long, over the model's limit of "
            f"{MAX_INPUT_TOKENS:,} input tokens (system prompt and earlier turns included). "
            "Shorten your message or clear the chat and try again."
        )
    return ids.to(chat.model.device)


def stream_reply(
    chat: ChatModel, messages: list[dict[str, Any]], *, max_new_tokens: int = DEFAULT_MAX_NEW_TOKENS
) -> Iterator[str]:
    """Yield the reply so far, growing, as greedy generation streams it.

    Raises:
        InputTooLongError: before anything is generated.
    """
    from transformers import TextIteratorStreamer

    ids = prompt_ids(chat, messages)
    streamer = TextIteratorStreamer(chat.tokenizer, skip_prompt=True, skip_special_tokens=True)
    failure: list[BaseException] = []

    def generate() -> None:
        try:
            chat.model.generate(
                input_ids=ids,
                attention_mask=ids.new_ones(ids.shape),
                streamer=streamer,
                max_new_tokens=max_new_tokens,
                do_sample=False,
                eos_token_id=list(STOP_TOKEN_IDS),
                pad_token_id=chat.tokenizer.pad_token_id,
            )
        except BaseException as err:  # re-raised in the caller's thread below
            failure.append(err)
            streamer.end()  # unblock the consumer, which would otherwise wait forever

    thread = threading.Thread(target=generate, daemon=True)
    thread.start()
    text = ""
    for piece in streamer:
        text += piece
        yield text
    thread.join()
    if failure:
        raise failure[0]
