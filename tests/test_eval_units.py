"""Pieces of the evaluation that need no model: facts, metrics, model args, layout."""

from __future__ import annotations

import math
from pathlib import Path
from types import SimpleNamespace

import pytest

from rsi_hub.chat import render
from rsi_hub.errors import ConfigError, RsiHubError
from rsi_hub.evaluate import genfacts, harness, store
from rsi_hub.evaluate.config import EvalConfig
from rsi_hub.evaluate.models import facts_from_vllm_completion
from rsi_hub.evaluate.protocol import SUITES, resolve_suites
from rsi_hub.evaluate.runner import check_rendered_prompts, hf_model_args, vllm_model_args
from rsi_hub.rundir import EvalMeta


@pytest.mark.parametrize(
    ("ids", "limit", "expected"),
    [
        ([5, 6, 11, 0, 0], 5, (2, "eot")),  # padding after the end-of-turn token is ignored
        ([5, 2, 0], 3, (1, "eos")),
        ([11], 4, (0, "eot")),
        ([5, 6, 7, 8], 4, (4, "length")),
        ([5, 6], 4, (2, "stop_string")),  # the batch stopped on "<|im_end|>" spelled as text
    ],
)
def test_facts_from_token_ids(ids: list[int], limit: int, expected: tuple[int, str]) -> None:
    facts = genfacts.facts_from_token_ids(ids, limit)
    assert (facts.tokens, facts.stop) == expected
    assert facts.stopped == (expected[1] != "length")


def test_facts_from_vllm_completion() -> None:
    done = SimpleNamespace(token_ids=[7, 8, 11], finish_reason="stop")
    cut = SimpleNamespace(token_ids=[7, 8, 9], finish_reason="length")
    by_string = SimpleNamespace(token_ids=[7, 8], finish_reason="stop")
    assert facts_from_vllm_completion(done) == genfacts.GenerationFacts(2, "eot")
    assert facts_from_vllm_completion(cut) == genfacts.GenerationFacts(3, "length")
    assert facts_from_vllm_completion(by_string).stopped


def test_registry_is_keyed_by_document_content() -> None:
    genfacts.clear()
    genfacts.record({"id": "a", "prompt": "x"}, genfacts.GenerationFacts(3, "eot"))
    assert genfacts.lookup({"prompt": "x", "id": "a"}) == genfacts.GenerationFacts(3, "eot")
    assert genfacts.lookup({"id": "a", "prompt": "y"}) is None
    genfacts.clear()


def test_vllm_model_args_carry_parallelism_and_served_limits(tmp_path: Path) -> None:
    args = vllm_model_args(tmp_path, tensor_parallel_size=2, data_parallel_size=2)
    assert args["pretrained"] == str(tmp_path)
    assert (args["tensor_parallel_size"], args["data_parallel_size"]) == (2, 2)
    assert args["max_model_len"] == 8192 + 2048 and args["max_gen_toks"] == 2048
    assert args["batch_size"] == "auto" and args["enable_thinking"] is False
    assert args["chat_template_args"] == {"use_default_system_prompt": True}
    with pytest.raises(ConfigError, match="--tensor-parallel-size must be at least 1") as err:
        EvalConfig(tmp_path, tensor_parallel_size=0)
    assert err.value.field == "tensor_parallel_size"


def test_hf_model_args_leave_room_for_served_prompts(tmp_path: Path) -> None:
    args = hf_model_args(tmp_path, batch_size=None, device="cpu", max_gen_toks=2048)
    assert args["max_length"] == 8192 + 2048
    assert args["batch_size"] == 8 and args["enable_thinking"] is False


def test_if_metrics_count_a_type_once_per_prompt() -> None:
    doc = {
        "checks": [
            {"type": "word_times", "word": "sea", "n": 1},
            {"type": "word_times", "word": "sky", "n": 1},
            {"type": "no_char", "char": "q"},
        ]
    }
    metrics = harness.process_if(doc, ["The sea and the sea."])
    assert metrics == {"acc": 0.0, "pass_count": 0.0, "miss_word_times": 1.0, "miss_no_char": 0.0}
    assert harness.process_if(doc, ["sea sky"])["acc"] == 1.0
    assert harness.miss_rate([1.0, 0.0, 0.0, 1.0]) == 0.5 and math.isnan(harness.miss_rate([]))
    assert harness.total([1.0, 0.0, 1.0]) == 2.0


def test_ev4_metrics_use_recorded_facts() -> None:
    doc = {"id": "ev4-x", "prompt": "2+2?", "checks": [{"type": "number_eq", "value": 4}]}
    genfacts.clear()
    genfacts.record(doc, genfacts.GenerationFacts(2048, "length"))
    metrics = harness.process_ev4(doc, ["4"])
    genfacts.clear()
    assert metrics["checks_passed"] == 1.0 and metrics["checks_total"] == 1.0
    assert metrics["stop_rate"] == 0.0 and metrics["answer_tokens"] == 2048.0
    assert metrics["stop_exact"] == 1.0


def test_ev4_without_facts_retokenises(tiny_run: Path) -> None:
    doc = {"id": "ev4-y", "prompt": "2+2?", "checks": [{"type": "number_eq", "value": 4}]}
    harness._remember({"pretrained": str(tiny_run), "max_gen_toks": 3})
    try:
        short = harness.process_ev4(doc, ["4"])
        long = harness.process_ev4(doc, ["The answer is four, or 4."])
    finally:
        harness._remember({})
    assert short["stop_exact"] == 0.0 and short["stop_rate"] == 1.0
    assert long["stop_rate"] == 0.0 and long["answer_tokens"] >= 3


def test_pref_normalises_by_tokens(tiny_run: Path) -> None:
    harness._remember({"pretrained": str(tiny_run)})
    chosen, rejected = "Blue.", "The colour of a clear sky is blue."
    n_chosen = harness.count_answer_tokens(chosen)
    n_rejected = harness.count_answer_tokens(rejected)
    assert n_rejected > n_chosen
    # Same total log-probability: per token the longer answer is more likely.
    doc = {"chosen": chosen, "rejected": rejected}
    metrics = harness.process_pref(doc, [(-10.0, False), (-10.0, False)])
    assert metrics == {"acc_norm": 0.0, "acc_norm_chars": 0.0, "acc": 0.0}  # ties are misses
    metrics = harness.process_pref(doc, [(-1.0 * n_chosen, False), (-1.5 * n_rejected, False)])
    assert metrics["acc_norm"] == 1.0 and metrics["acc"] == (n_chosen < 1.5 * n_rejected)
    harness._remember({})


@pytest.mark.parametrize("answer", ["Blue.", "\n\n- one\n- two", " leading space", "42"])
def test_answer_tokens_are_counted_as_in_context(tiny_run: Path, answer: str) -> None:
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(tiny_run)
    context = render([{"role": "user", "content": "Name a colour."}])
    whole = tokenizer(context + answer, add_special_tokens=False).input_ids
    prompt = tokenizer(context, add_special_tokens=False).input_ids
    harness._remember({"pretrained": str(tiny_run)})
    try:
        assert harness.count_answer_tokens(answer) == len(whole) - len(prompt)
    finally:
        harness._remember({})


def test_pref_doc_shapes() -> None:
    doc = harness.pref_doc(3, [{"role": "user", "content": "Hi"}], "Hello.", "Go away.")
    assert doc == {
        "id": "3",
        "system": "",
        "prompt": "Hi",
        "chosen": "Hello.",
        "rejected": "Go away.",
    }
    with_system = harness.pref_doc(
        0, [{"role": "system", "content": "Be terse."}, {"role": "user", "content": "Hi"}], "a", "b"
    )
    assert with_system["system"] == "Be terse."
    with pytest.raises(RsiHubError, match="one user message"):
        harness.pref_doc(
            1,
            [
                {"role": "user", "content": "a"},
                {"role": "assistant", "content": "b"},
                {"role": "user", "content": "c"},
            ],
            "x",
            "y",
        )


def test_rendered_prompt_check_catches_the_wrong_protocol() -> None:
    doc = {"id": "if263-0001", "prompt": "Say hi.", "checks": []}
    with_k0 = render([{"role": "user", "content": "Say hi."}])
    sample = {"doc_id": 0, "doc": doc, "arguments": [[with_k0, {}]]}
    check_rendered_prompts(SUITES["if818"], {"if818": [sample]})
    with pytest.raises(RsiHubError, match="no system message expected"):
        check_rendered_prompts(SUITES["if263"], {"if263": [sample]})


def test_suite_resolution() -> None:
    assert [s.name for s in resolve_suites("all")] == ["if818", "if263", "ev4", "pref", "mmlu"]
    assert resolve_suites("if263")[0].system_prompt_id is None
    assert [s.name for s in resolve_suites("ev4, if818,ev4")] == ["ev4", "if818"]
    with pytest.raises(RsiHubError, match="unknown suite"):
        resolve_suites("if999")


def test_suite_dir_is_replaced_atomically(tmp_path: Path) -> None:
    one, two = EvalMeta(suite="if818", limit=1), EvalMeta(suite="if818", limit=2)
    store.write_suite_dir(tmp_path, "if818", {"results": {}}, {"if818": [{"a": 1}]}, one)
    store.write_suite_dir(tmp_path, "if818", {"results": {}}, {"if818": [{"a": 2}]}, two)
    record = store.read_suite_dir(tmp_path, "if818")
    assert record.meta == two
    assert [s for _, s in record.samples()] == [{"a": 2}]
    assert sorted(p.name for p in (tmp_path / "eval").iterdir()) == ["if818"]
