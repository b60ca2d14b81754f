"""The served chat template renders exactly the strings of the serving contract."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rsi_hub.chat import load_chat_template, load_system_prompt, render

# Transcribed from card section 1; the file and the template must match it byte for byte.
K0 = (
    "You follow instructions precisely. Answer each request exactly as specified, including "
    "format, structure, length, and any word, sentence, or character counts. Check your answer "
    "against every constraint before you finish, and correct anything that does not comply. A "
    "required opening or closing phrase counts as one of the requested sentences. When a word "
    "must appear exactly a given number of times, place that many occurrences into the draft "
    "first. Before finishing, count the sentences, the words, and every repeated word, and "
    "rewrite until each count is exactly right. Keep the reply as short as the request allows: "
    "no preamble, no asides and no closing remarks."
)
REPO = Path(__file__).resolve().parents[1]

USER = [{"role": "user", "content": "Name a colour."}]


def test_system_prompt_file_is_k0_byte_for_byte() -> None:
    raw = (REPO / "templates" / "system_prompt.txt").read_bytes()
    assert raw == K0.encode("utf-8")  # one paragraph, no trailing newline
    assert load_system_prompt() == K0


def test_template_embeds_k0_verbatim() -> None:
    assert f'"{K0}"' in load_chat_template()


@pytest.mark.parametrize(
    ("messages", "kwargs", "expected"),
    [
        (
            USER,
            {},
            f"<|im_start|>system\n{K0}<|im_end|>\n"
            "<|im_start|>user\nName a colour.<|im_end|>\n<|im_start|>assistant\n",
        ),
        (
            USER,
            {"add_generation_prompt": False},
            f"<|im_start|>system\n{K0}<|im_end|>\n<|im_start|>user\nName a colour.<|im_end|>\n",
        ),
        (
            [{"role": "system", "content": "Be brief."}, *USER],
            {},
            "<|im_start|>system\nBe brief.<|im_end|>\n"
            "<|im_start|>user\nName a colour.<|im_end|>\n<|im_start|>assistant\n",
        ),
        (
            USER,
            {"use_default_system_prompt": False},
            "<|im_start|>user\nName a colour.<|im_end|>\n<|im_start|>assistant\n",
        ),
        (
            USER,
            {"use_default_system_prompt": False, "enable_thinking": True},
            "<|im_start|>user\nName a colour.<|im_end|>\n<|im_start|>assistant\n<think>\n",
        ),
        (
            USER,
            {"use_default_system_prompt": False, "enable_thinking": False},
            "<|im_start|>user\nName a colour.<|im_end|>\n<|im_start|>assistant\n",
        ),
        (
            [
                {"role": "user", "content": "Hi."},
                {"role": "assistant", "content": "Hello."},
                {"role": "user", "content": [{"type": "text", "text": "Bye."}]},
            ],
            {"use_default_system_prompt": False},
            "<|im_start|>user\nHi.<|im_end|>\n<|im_start|>assistant\nHello.<|im_end|>\n"
            "<|im_start|>user\nBye.<|im_end|>\n<|im_start|>assistant\n",
        ),
    ],
    ids=[
        "default-k0",
        "no-generation-prompt",
        "own-system",
        "no-system-if263",
        "thinking-on",
        "thinking-off",
        "multi-turn-parts",
    ],
)
def test_render_exact(messages: list, kwargs: dict, expected: str) -> None:
    assert render(messages, **kwargs) == expected


def test_thinking_off_never_emits_think() -> None:
    conversation = [*USER, {"role": "assistant", "content": "Red."}, *USER]
    assert "<think>" not in render(conversation)
    assert "<think>" not in render(conversation, use_default_system_prompt=False)


def test_tokenizer_renders_like_render(tiny_run: Path) -> None:
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(tiny_run)
    for kwargs in ({}, {"enable_thinking": True}, {"use_default_system_prompt": False}):
        via_tokenizer = tokenizer.apply_chat_template(
            USER, tokenize=False, add_generation_prompt=True, **kwargs
        )
        assert via_tokenizer == render(USER, **kwargs)


def test_both_template_copies_byte_identical(tiny_run: Path) -> None:
    on_disk = (tiny_run / "chat_template.jinja").read_bytes()
    in_config = json.loads((tiny_run / "tokenizer_config.json").read_text("utf-8"))
    assert in_config["chat_template"].encode("utf-8") == on_disk
    assert on_disk == load_chat_template().encode("utf-8")
    assert in_config["eos_token"] == "<|im_end|>"


def test_serving_config_is_the_cards(tiny_run: Path) -> None:
    config = json.loads((tiny_run / "serving_config.json").read_text("utf-8"))
    assert config["max_input_tokens"] == 8192
    assert config["add_generation_prompt"] is True
    assert config["enable_thinking"] is False
    assert config["decoding"] == {
        "do_sample": False,
        "temperature": 0.0,
        "top_p": 1.0,
        "max_new_tokens": 2048,
    }
    generation = json.loads((tiny_run / "generation_config.json").read_text("utf-8"))
    assert generation["eos_token_id"] == [11, 2]
    assert generation["do_sample"] is False
    assert generation["max_new_tokens"] == 2048
