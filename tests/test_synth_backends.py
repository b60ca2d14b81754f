"""Generation backends: vLLM request construction (no vLLM needed) and HF on the tiny checkpoint."""

from __future__ import annotations

from types import SimpleNamespace

from rsi_hub.chat import STOP_TOKEN_IDS, render
from rsi_hub.synth import GenerationRequest, SamplingSettings
from rsi_hub.synth.backends import (
    HFBackend,
    request_seed,
    vllm_generation,
    vllm_prompts,
    vllm_sampling_kwargs,
)
from rsi_hub.synth.filter import generation_messages
from tests.synth_standins import PROMPTS

SAMPLING = SamplingSettings(temperature=0.7, top_p=0.9, max_new_tokens=12, seed=5)


def _requests(mode: str = "lensyn") -> list[GenerationRequest]:
    return [
        GenerationRequest(p.id, s, generation_messages(p, mode)) for p in PROMPTS for s in (0, 1)
    ]


def test_vllm_sampling_params_per_request() -> None:
    requests = _requests()
    kwargs = [vllm_sampling_kwargs(SAMPLING, r) for r in requests]
    assert kwargs[0] == {
        "n": 1,
        "temperature": 0.7,
        "top_p": 0.9,
        "max_tokens": 12,
        "seed": request_seed(5, "p1", 0),
        "stop_token_ids": list(STOP_TOKEN_IDS),
        "skip_special_tokens": True,
    }
    # Per-sample seeds: distinct, and independent of batch position (resume draws the same).
    assert len({k["seed"] for k in kwargs}) == len(kwargs)
    assert vllm_sampling_kwargs(SAMPLING, requests[3])["seed"] == request_seed(5, "p2", 1)


def test_vllm_prompts_are_served_token_ids(tiny_run) -> None:
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(tiny_run)
    requests = _requests()
    prompts = vllm_prompts(tokenizer, requests)
    text = render(requests[0].messages, add_generation_prompt=True)
    assert text.startswith("<|im_start|>system\nYou write answers")  # the scaffold, not k0
    assert text.endswith("<|im_start|>assistant\n")
    ids = prompts[0]["prompt_token_ids"]
    assert ids == tokenizer(text, add_special_tokens=False)["input_ids"]
    assert ids[0] == 10  # <|im_start|>: no BOS prepended


def test_vllm_generation_maps_finish_reason() -> None:
    cut = vllm_generation(SimpleNamespace(text="abc", finish_reason="length", token_ids=[1, 2]))
    done = vllm_generation(SimpleNamespace(text="abc", finish_reason="stop", token_ids=[1]))
    assert (cut.truncated, cut.n_tokens, done.truncated) == (True, 2, False)


def test_hf_backend_batches_with_left_padding(tiny_run) -> None:
    backend = HFBackend(tiny_run, SAMPLING, device="cpu")
    assert backend.tokenizer.padding_side == "left"
    requests = _requests("rft")[:3]
    generations = backend.generate(requests)
    assert len(generations) == 3
    for g in generations:
        assert isinstance(g.text, str)
        assert 0 <= g.n_tokens <= 12
        assert "<|im_end|>" not in g.text
    # Same seed, same batch: the same samples (a resumed batch is reproducible).
    assert [g.text for g in backend.generate(requests)] == [g.text for g in generations]


def test_vllm_backend_with_a_fake_engine(tiny_run, monkeypatch) -> None:
    """The offline call vLLM receives: served token prompts, one SamplingParams per request."""
    import sys
    import types

    from rsi_hub.synth.backends import VLLMBackend

    calls: dict = {}

    class FakeLLM:
        def __init__(self, **kwargs) -> None:
            calls["engine"] = kwargs

        def generate(self, prompts, params, use_tqdm=False):
            calls["prompts"], calls["params"] = prompts, params
            done = SimpleNamespace(text="FINAL: ok", finish_reason="stop", token_ids=[5, 6])
            return [SimpleNamespace(outputs=[done]) for _ in prompts]

    fake = types.ModuleType("vllm")
    fake.LLM = FakeLLM
    fake.SamplingParams = lambda **kwargs: kwargs
    monkeypatch.setitem(sys.modules, "vllm", fake)

    backend = VLLMBackend(tiny_run, SAMPLING, tensor_parallel_size=4)
    requests = _requests()
    generations = backend.generate(requests)
    assert calls["engine"]["model"] == str(tiny_run)
    assert calls["engine"]["tensor_parallel_size"] == 4
    assert calls["prompts"] == vllm_prompts(backend.tokenizer, requests)
    assert calls["params"] == [vllm_sampling_kwargs(SAMPLING, r) for r in requests]
    assert [g.text for g in generations] == ["FINAL: ok"] * len(requests)
