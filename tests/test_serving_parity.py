"""Parity of a real `rsi-hub serve` (transformers serve) process with in-process generation.

One server per session (conftest's `stopping_server`), on the tiny model made to stop, talked to with
the real `openai` client on the first 20 IF-818 prompts. The reference is `model.generate` on
the prompt `rsi_hub.chat.render` builds, greedy, stopping at ids 11 and 2, in one thread (as
the server runs) so that both sides compute the same floats.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

from rsi_hub.chat import MAX_INPUT_TOKENS, STOP_TEXTS, STOP_TOKEN_IDS, render

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[1]
N_PROMPTS = 20
NEW_TOKENS = 8
NO_SYSTEM = {"chat_template_kwargs": {"use_default_system_prompt": False}}  # the IF263 switch


def _prompts() -> list[str]:
    path = REPO / "tasks" / "lm_eval" / "data" / "prompts_if818.jsonl"
    with path.open(encoding="utf-8") as lines:
        return [
            json.loads(line)["prompt"] for _, line in zip(range(N_PROMPTS), lines, strict=False)
        ]


@pytest.fixture(scope="module")
def reference(stopping_run: Path) -> dict[bool, list[dict]]:
    """In-process answers per k0 flag: prompt ids, generated ids, text, how each ended."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(stopping_run)
    model = AutoModelForCausalLM.from_pretrained(stopping_run).eval()
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    answers: dict[bool, list[dict]] = {True: [], False: []}
    try:
        for k0 in (True, False):
            for prompt in _prompts():
                text = render([{"role": "user", "content": prompt}], use_default_system_prompt=k0)
                ids = tokenizer(text, return_tensors="pt", add_special_tokens=False).input_ids
                with torch.no_grad():
                    out = model.generate(
                        ids, max_new_tokens=NEW_TOKENS, do_sample=False, eos_token_id=STOP_TOKEN_IDS
                    )[0, ids.shape[1] :].tolist()
                answers[k0].append(
                    {
                        "prompt_tokens": ids.shape[1],
                        "ids": out,
                        "text": tokenizer.decode(out, skip_special_tokens=True),
                        "stop": out[-1] if out[-1] in STOP_TOKEN_IDS else None,
                    }
                )
    finally:
        torch.set_num_threads(threads)
    return answers


@pytest.fixture(scope="module")
def client(stopping_server):
    import openai

    client = openai.OpenAI(base_url=stopping_server.base_url, api_key="none", max_retries=0)
    return client, stopping_server


def _ask(client, prompt: str, **extra):
    openai_client, server = client
    return openai_client.chat.completions.create(
        model=server.model_id,
        messages=[{"role": "user", "content": prompt}],
        temperature=0,
        max_tokens=NEW_TOKENS,
        **({"extra_body": extra} if extra else {}),
    )


def test_the_variant_ends_answers_every_way(reference: dict[bool, list[dict]]) -> None:
    ends = {a["stop"] for answers in reference.values() for a in answers}
    assert ends == {11, 2, None}, "the fixture must exercise both stop ids and the length limit"


@pytest.mark.parametrize("k0", [True, False], ids=["k0", "if263-no-system"])
def test_greedy_chat_completions_are_byte_identical(client, reference, k0: bool) -> None:
    for prompt, expected in zip(_prompts(), reference[k0], strict=True):
        reply = _ask(client, prompt) if k0 else _ask(client, prompt, **NO_SYSTEM)
        choice = reply.choices[0]
        assert choice.message.content == expected["text"]
        # The server rendered our prompt: same token count as rsi_hub's rendering, and the
        # answer (a function of every prompt token) is the same.
        assert reply.usage.prompt_tokens == expected["prompt_tokens"]
        assert reply.usage.completion_tokens == len(expected["ids"])
        assert choice.finish_reason == ("length" if expected["stop"] is None else "stop")


def test_k0_is_rendered_only_without_the_switch(client, reference) -> None:
    k0_tokens = len(render([{"role": "user", "content": "x"}])) - len(
        render([{"role": "user", "content": "x"}], use_default_system_prompt=False)
    )
    assert k0_tokens > 0
    with_k0 = _ask(client, _prompts()[0]).usage.prompt_tokens
    without = _ask(client, _prompts()[0], **NO_SYSTEM).usage.prompt_tokens
    assert with_k0 == reference[True][0]["prompt_tokens"]
    assert without == reference[False][0]["prompt_tokens"] < with_k0
    # An explicit system message replaces k0 (the template inserts k0 only when none is given).
    openai_client, server = client
    own = openai_client.chat.completions.create(
        model=server.model_id,
        messages=[{"role": "system", "content": "Be brief."}, {"role": "user", "content": "x"}],
        temperature=0,
        max_tokens=1,
    )
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(server.model_id)
    rendered = render(
        [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "x"}]
    )
    assert own.usage.prompt_tokens == len(tokenizer(rendered, add_special_tokens=False).input_ids)


def test_stops_leave_no_stop_token_in_the_text(client, reference) -> None:
    stopped = [(p, a) for p, a in zip(_prompts(), reference[True], strict=True) if a["stop"]]
    assert {a["stop"] for _, a in stopped} == {11, 2}
    for prompt, expected in stopped:
        reply = _ask(client, prompt)
        content = reply.choices[0].message.content
        assert reply.choices[0].finish_reason == "stop"
        assert reply.usage.completion_tokens < NEW_TOKENS
        assert not any(stop in content for stop in STOP_TEXTS)
        assert content == expected["text"]


def test_streaming_yields_the_same_text(client, reference) -> None:
    openai_client, server = client
    cuts = 0
    for prompt, expected in zip(_prompts(), reference[True], strict=True):
        stream = openai_client.chat.completions.create(
            model=server.model_id,
            messages=[{"role": "user", "content": prompt}],
            temperature=0,
            max_tokens=NEW_TOKENS,
            stream=True,
        )
        chunks = list(stream)
        text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
        # Engine caveat (README): an answer cut by the length limit inside a multi-byte UTF-8
        # character ends in U+FFFD when decoded whole, while the engine's streaming decoder
        # (tokenizers' DecodeStream) holds the incomplete bytes back and never sends them.
        cut = expected["stop"] is None and expected["text"].endswith("\ufffd")
        assert text == (expected["text"].rstrip("\ufffd") if cut else expected["text"])
        cuts += cut
        assert chunks[-1].choices[0].finish_reason == (
            "length" if expected["stop"] is None else "stop"
        )
    assert cuts < N_PROMPTS, "most answers must be compared whole"


def test_input_over_8192_tokens_is_refused_with_a_clear_error(client) -> None:
    import openai
    from transformers import AutoTokenizer

    openai_client, server = client
    tokenizer = AutoTokenizer.from_pretrained(server.model_id)

    def message(n: int) -> str:
        return "word" + " word" * n  # each " word" is one token

    def tokens(n: int) -> int:
        text = render([{"role": "user", "content": message(n)}])
        return len(tokenizer(text, add_special_tokens=False).input_ids)

    n = MAX_INPUT_TOKENS - tokens(0)
    assert (tokens(n), tokens(n + 1)) == (MAX_INPUT_TOKENS, MAX_INPUT_TOKENS + 1)
    at_limit = openai_client.chat.completions.create(
        model=server.model_id,
        messages=[{"role": "user", "content": message(n)}],
        temperature=0,
        max_tokens=1,
    )
    assert at_limit.usage.prompt_tokens == MAX_INPUT_TOKENS
    with pytest.raises(openai.BadRequestError) as refused:
        openai_client.chat.completions.create(
            model=server.model_id,
            messages=[{"role": "user", "content": message(n + 1)}],
            temperature=0,
            max_tokens=1,
        )
    assert refused.value.status_code == 400
    assert refused.value.body["message"] == (
        "the prompt has 8193 tokens, more than this model's maximum input of 8192 tokens; "
        "shorten the conversation."
    )
    assert refused.value.body["code"] == "context_length_exceeded"
