"""Loading the template files of `templates/` and rendering conversations with them."""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path
from typing import Any

from rsi_hub.shipped import resource_path

SYSTEM_PROMPT_ID = "k0"
CHAT_TEMPLATE_FILE = "chat_template.jinja"
SYSTEM_PROMPT_FILE = "system_prompt.txt"
SERVING_CONFIG_FILE = "serving_config.json"

Message = dict[str, Any]


def templates_dir() -> Path:
    """The installed `templates/` folder (the checkout's own folder in an editable install)."""
    return resource_path("templates")


@lru_cache(maxsize=1)
def load_chat_template() -> str:
    """The served chat template (ChatML, k0 by default, thinking off by default), verbatim."""
    return (templates_dir() / CHAT_TEMPLATE_FILE).read_text(encoding="utf-8")


@lru_cache(maxsize=1)
def load_system_prompt() -> str:
    """The served system prompt k0, verbatim: one paragraph, no trailing newline."""
    return (templates_dir() / SYSTEM_PROMPT_FILE).read_text(encoding="utf-8")


def served_messages(user: str) -> list[dict[str, str]]:
    """The conversation a user message is served in: k0 as the system message, then the message.

    What rft generates from, what every RL rollout is prompted with, and the start of a kept
    synthetic training row.
    """
    return [
        {"role": "system", "content": load_system_prompt()},
        {"role": "user", "content": user},
    ]


def load_serving_config() -> dict[str, Any]:
    """The serving settings of card section 1 (`serving_config.json`), as a fresh dict."""
    return json.loads((templates_dir() / SERVING_CONFIG_FILE).read_text(encoding="utf-8"))


def render(
    messages: list[Message],
    *,
    add_generation_prompt: bool = True,
    enable_thinking: bool = False,
    use_default_system_prompt: bool = True,
) -> str:
    """Render one conversation with the served template, exactly as `apply_chat_template` does.

    Args:
        messages: OpenAI-style dicts with `role` and `content` (a string or a list of
            `{"type": "text", "text": ...}` parts).
        add_generation_prompt: end with `<|im_start|>assistant\\n` (the served default).
        enable_thinking: open a `<think>` block after the generation prompt (off when served).
        use_default_system_prompt: insert k0 when the conversation has no system message;
            false renders no system message at all (the card's IF263 protocol).

    Returns:
        The prompt text, special tokens included as text.
    """
    # transformers' own renderer (same sandbox, same Jinja options as the tokenizer's).
    from transformers.utils.chat_template_utils import render_jinja_template

    rendered, _ = render_jinja_template(
        [messages],
        chat_template=load_chat_template(),
        add_generation_prompt=add_generation_prompt,
        enable_thinking=enable_thinking,
        use_default_system_prompt=use_default_system_prompt,
    )
    return rendered[0]
