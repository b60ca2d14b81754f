"""The embedded default: determinism, block kinds, special ids, and stopping as users load it."""

from __future__ import annotations

import filecmp
from pathlib import Path

import pytest
import torch

from rsi_hub.chat import STOP_TOKEN_IDS
from rsi_hub.errors import OutputDirNotEmptyError
from rsi_hub.tiny import build_tiny


class ForceTokenAt:
    """A logits processor that makes `token_id` the only choice at new-token step `step`."""

    def __init__(self, prompt_len: int, step: int, token_id: int) -> None:
        self.position = prompt_len + step
        self.token_id = token_id

    def __call__(self, input_ids: torch.Tensor, scores: torch.Tensor) -> torch.Tensor:
        if input_ids.shape[1] == self.position:
            forced = torch.full_like(scores, float("-inf"))
            forced[:, self.token_id] = 0.0
            return forced
        # Elsewhere keep both stop ids out of reach so only the forced one can end the reply.
        scores[:, STOP_TOKEN_IDS] = float("-inf")
        return scores


def test_same_seed_same_bytes(tiny_run: Path, tmp_path: Path) -> None:
    again = build_tiny(tmp_path / "again", seed=0)
    names = sorted(p.name for p in tiny_run.iterdir())
    assert names == sorted(p.name for p in again.iterdir())
    match, mismatch, errors = filecmp.cmpfiles(tiny_run, again, names, shallow=False)
    assert mismatch == [] and errors == []
    assert len(match) == len(names)


def test_other_seed_other_weights(tiny_run: Path, tmp_path: Path) -> None:
    other = build_tiny(tmp_path / "other", seed=1)
    assert (other / "model.safetensors").read_bytes() != (
        tiny_run / "model.safetensors"
    ).read_bytes()
    assert (other / "tokenizer.json").read_bytes() == (tiny_run / "tokenizer.json").read_bytes()


def test_refuses_non_empty_dir_without_force(tmp_path: Path) -> None:
    target = tmp_path / "busy"
    target.mkdir()
    (target / "keep.txt").write_text("mine")
    with pytest.raises(OutputDirNotEmptyError, match="--force"):
        build_tiny(target)
    assert (target / "keep.txt").read_text() == "mine"
    build_tiny(target, force=True)
    assert not (target / "keep.txt").exists()
    assert (target / "model.safetensors").is_file()


def test_every_block_kind_and_small(tiny_run: Path) -> None:
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(tiny_run)
    assert model.config.model_type == "nemotron_h"
    kinds = set(model.config.layers_block_type)
    assert kinds == {"linear_attention", "full_attention", "moe"}
    assert sum(p.numel() for p in model.parameters()) < 3_000_000


def test_special_token_ids(tiny_run: Path) -> None:
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(tiny_run)
    ids = tokenizer.convert_tokens_to_ids(["<unk>", "<s>", "</s>", "<|im_start|>", "<|im_end|>"])
    assert ids == [0, 1, 2, 10, 11]
    assert tokenizer.eos_token == "<|im_end|>"
    assert tokenizer.eos_token_id == 11
    # The chat markers are single tokens, never split into bytes.
    assert tokenizer("<|im_start|>user\nhi<|im_end|>").input_ids[0] == 10
    assert tokenizer("hi<|im_end|>").input_ids[-1] == 11


@pytest.mark.parametrize("stop_id", [11, 2])
def test_generate_stops_at_stop_id(tiny_run: Path, stop_id: int) -> None:
    from transformers import AutoModelForCausalLM, AutoTokenizer, LogitsProcessorList

    tokenizer = AutoTokenizer.from_pretrained(tiny_run)
    model = AutoModelForCausalLM.from_pretrained(tiny_run)
    prompt = tokenizer.apply_chat_template(
        [{"role": "user", "content": "Hi."}], add_generation_prompt=True, return_tensors="pt"
    )
    input_ids = prompt["input_ids"] if hasattr(prompt, "keys") else prompt
    prompt_len = input_ids.shape[1]
    output = model.generate(
        input_ids,
        attention_mask=torch.ones_like(input_ids),
        max_new_tokens=20,
        logits_processor=LogitsProcessorList([ForceTokenAt(prompt_len, 4, stop_id)]),
    )
    new_tokens = output[0, prompt_len:].tolist()
    assert len(new_tokens) == 5
    assert new_tokens[-1] == stop_id
    assert not set(new_tokens[:-1]) & {11, 2}


@pytest.mark.parametrize("stop_id", [11, 2])
def test_pipeline_renders_k0_and_stops(tiny_run: Path, stop_id: int) -> None:
    from transformers import LogitsProcessorList, pipeline

    from rsi_hub.chat import render

    chat = pipeline("text-generation", model=str(tiny_run))
    messages = [{"role": "user", "content": "Hi."}]
    prompt_ids = chat.tokenizer(render(messages)).input_ids
    assert chat.tokenizer.decode(prompt_ids).startswith("<|im_start|>system\nYou follow")
    result = chat(
        messages,
        max_new_tokens=20,
        return_tensors=True,
        logits_processor=LogitsProcessorList([ForceTokenAt(len(prompt_ids), 2, stop_id)]),
    )
    full = list(result[0]["generated_token_ids"])
    assert full[: len(prompt_ids)] == prompt_ids
    generated = full[len(prompt_ids) :]
    assert generated[-1] == stop_id
    assert len(generated) == 3
