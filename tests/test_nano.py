"""The `nano` random-init size: the CPU replication's model, built deterministically."""

from __future__ import annotations

import filecmp
from pathlib import Path

from rsi_hub.chat import load_system_prompt
from rsi_hub.chat.template import render
from rsi_hub.tiny import build_tiny, build_tiny_tokenizer


def test_nano_is_deterministic_with_every_block_kind(tmp_path: Path) -> None:
    from transformers import AutoModelForCausalLM

    first = build_tiny(tmp_path / "a", seed=0, size="nano")
    again = build_tiny(tmp_path / "b", seed=0, size="nano")
    names = sorted(p.name for p in first.iterdir())
    _match, mismatch, errors = filecmp.cmpfiles(first, again, names, shallow=False)
    assert mismatch == [] and errors == []
    model = AutoModelForCausalLM.from_pretrained(first)
    layers = model.config.layers_block_type
    assert layers == [
        "full_attention", "moe", "linear_attention", "moe", "full_attention", "moe"
    ]  # fmt: skip
    assert model.config.hidden_size == 256
    assert (model.config.num_attention_heads, model.config.num_key_value_heads) == (8, 1)
    assert sum(p.numel() for p in model.parameters()) == 4_770_232


def test_nano_tokenizer_makes_served_rows_shorter() -> None:
    # The nano tokenizer learns k0 as often as serving sends it: fewer tokens per training row.
    k0 = load_system_prompt()
    tiny, nano = build_tiny_tokenizer("tiny"), build_tiny_tokenizer("nano")
    assert len(tiny(k0, add_special_tokens=False)["input_ids"]) == 182
    # k0 is one added token (id 4096, after the 4,096 BPE ids): 1 token instead of ~126.
    assert nano(k0, add_special_tokens=False)["input_ids"] == [4096]
    assert len(nano) == 4097
    assert nano.decode([4096]) == k0
    # Any other system prompt (one word of k0 changed) is tokenised word by word as before.
    other = k0.replace("precisely", "carefully")
    assert len(nano(other, add_special_tokens=False)["input_ids"]) > 100
    # A served conversation (k0 by default) carries k0 as that one token, between its markers.
    ids = nano(render([{"role": "user", "content": "Say hi."}]), add_special_tokens=False)
    assert ids["input_ids"][:7] == [
        10,
        94,
        3887,
        2010,
        210,
        4096,
        11,
    ]  # <|im_start|>system\n k0 <|im_end|>
    for token, token_id in {"<unk>": 0, "<s>": 1, "</s>": 2, "<|im_end|>": 11}.items():
        assert nano.convert_tokens_to_ids(token) == token_id
