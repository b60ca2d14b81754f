"""Verify-and-revise (`rsi_hub.serving.revise`): the loop, the requests it sends, the adapters."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from rsi_hub.chat import render
from rsi_hub.checker import CheckError, check
from rsi_hub.errors import ConfigError, GenerationError
from rsi_hub.serving import (
    Generation,
    LocalGenerator,
    OpenAIGenerator,
    explain,
    revise,
    revision_request,
)


def _explain(spec: dict, answer: str) -> str:
    return explain(spec, check(answer, [spec]).results[0])


@pytest.mark.parametrize(
    ("spec", "answer", "expected"),
    [
        (
            {"type": "word_eq", "n": 50},
            "word " * 48,
            "Your answer has 48 words; the request asks for exactly 50. Add 2 words.",
        ),
        (
            {"type": "word_max", "n": 2},
            "one two three",
            "Your answer has 3 words; the request asks for at most 2. Remove at least 1 word.",
        ),
        (
            {"type": "word_band", "lo": 5, "hi": 9},
            "one two three",
            "Your answer has 3 words; the request asks for between 5 and 9. Add at least 2 words.",
        ),
        (
            {"type": "bullet", "n": 3},
            "- a\n- b",
            'Your answer has 2 bullet points (lines starting with "- "); the request asks for '
            "exactly 3. Add 1 bullet point.",
        ),
        (
            {"type": "word_times", "word": "sea", "n": 1},
            "sea sea sky",
            "The word “sea” appears 2 times in your answer; the request asks for exactly 1 time. "
            "Remove 1 occurrence.",
        ),
        (
            {"type": "no_char", "char": "z"},
            "zebra Zoo",
            "Your answer contains “z” (either case) 2 times; the request forbids it anywhere. "
            "Replace every word that has it.",
        ),
        (
            {"type": "startswith", "text": "Dear team"},
            "Hello there",
            "Your answer starts with “Hello ther”; it must start with exactly “Dear team”.",
        ),
        (
            {"type": "json_keys", "keys": ["a", "b"]},
            '{"a": 1}',
            "Your JSON object lacks the key(s) “b”; it must have the keys “a”, “b”.",
        ),
        (
            {"type": "json_keys", "keys": ["a"]},
            "no json here",
            "Your answer holds no valid JSON (invalid JSON (Expecting value)); reply with one "
            "JSON object that has the keys “a”.",
        ),
        (
            {"type": "is_lower"},
            "Hello",
            "Your answer has 1 capital letter; write all of it in lower case.",
        ),
        # No phrasing of its own (EV4): the checker's reason, verbatim.
        (
            {"type": "number_eq", "value": 42},
            "It is 41.",
            "Your answer fails the number_eq check: "
            + check("It is 41.", [{"type": "number_eq", "value": 42}]).results[0].reason
            + ".",
        ),
    ],
)
def test_each_failed_check_becomes_an_actionable_sentence(spec, answer, expected) -> None:
    assert _explain(spec, answer) == expected


class Scripted:
    """A `generate` callable that answers from a list and records every conversation it got."""

    def __init__(self, *answers: str) -> None:
        self.answers = list(answers)
        self.seen: list[list[dict[str, str]]] = []

    def __call__(self, messages: list[dict[str, str]]) -> Generation:
        self.seen.append([dict(m) for m in messages])
        return Generation(self.answers.pop(0), 100 * len(messages), 10 + len(self.seen))


def test_revises_with_the_checker_reasons_until_every_check_passes() -> None:
    checks = [{"type": "word_eq", "n": 5}, {"type": "no_char", "char": "z"}]
    generate = Scripted("zero one", "one two three", "one two three four five", "unused")
    result = revise(generate, [{"role": "user", "content": "Five words."}], checks, max_rounds=4)

    assert [r.answer for r in result.rounds] == [
        "zero one",
        "one two three",
        "one two three four five",
    ]
    assert [r.checks_passed for r in result.rounds] == [0, 1, 2]
    assert result.best_index == 2 and result.passed and result.answer == "one two three four five"
    first_request = revision_request(
        [
            (checks[0], check("zero one", checks).results[0]),
            (checks[1], check("zero one", checks).results[1]),
        ]
    )
    assert result.rounds[1].request == first_request
    assert "Your answer has 2 words; the request asks for exactly 5. Add 3 words." in first_request
    assert "Your answer contains “z” (either case) 1 time" in first_request
    # Round 2 reads the conversation, the first answer and the request, in that order.
    assert generate.seen[1] == [
        {"role": "user", "content": "Five words."},
        {"role": "assistant", "content": "zero one"},
        {"role": "user", "content": first_request},
    ]
    assert len(generate.seen[2]) == 5 and generate.seen[2][3]["content"] == "one two three"
    assert (result.prompt_tokens, result.completion_tokens) == (100 + 300 + 500, 11 + 12 + 13)


def test_keeps_the_earliest_of_equally_good_answers() -> None:
    checks = [{"type": "word_eq", "n": 5}, {"type": "startswith", "text": "Yes"}]
    generate = Scripted("Yes one", "one two three four five", "No")
    result = revise(generate, [{"role": "user", "content": "x"}], checks, max_rounds=3)
    assert [r.checks_passed for r in result.rounds] == [1, 1, 0]
    assert result.best_index == 0 and result.answer == "Yes one" and not result.passed


def test_without_checks_they_come_from_the_prompt() -> None:
    generate = Scripted("A reply in five words.", "unused")
    message = "Answer in exactly five words. Do not use the letter q."
    result = revise(generate, [{"role": "user", "content": message}], max_rounds=3)
    assert result.extracted
    assert result.checks == [{"type": "word_eq", "n": 5}, {"type": "no_char", "char": "q"}]
    assert len(result.rounds) == 1 and result.passed
    # Nothing verifiable: one plain answer, nothing asked again.
    plain = revise(Scripted("hi", "unused"), [{"role": "user", "content": "Hello!"}], max_rounds=3)
    assert plain.checks == [] and len(plain.rounds) == 1 and plain.passed


def test_bad_arguments_fail_before_any_generation() -> None:
    generate = Scripted("never")
    with pytest.raises(ConfigError, match="max_rounds must be at least 1"):
        revise(generate, [{"role": "user", "content": "x"}], [], max_rounds=0)
    with pytest.raises(CheckError, match=r"unknown type .word_equals.; did you mean 'word_eq'"):
        revise(generate, [{"role": "user", "content": "x"}], [{"type": "word_equals", "n": 1}])
    assert generate.seen == []


def test_local_generator_answers_in_the_served_configuration(tiny_run: Path) -> None:
    """Round one is plain serving: the served template with k0, greedy, stop at id 11 or 2."""
    import torch

    generator = LocalGenerator.load(tiny_run, max_new_tokens=12)
    messages = [{"role": "user", "content": "Name a sea in two words."}]
    result = revise(generator, messages, max_rounds=2)
    assert result.checks == [{"type": "word_eq", "n": 2}]
    prompt = generator.tokenizer(render(messages), add_special_tokens=False, return_tensors="pt")
    with torch.inference_mode():
        expected = generator.model.generate(
            **prompt, max_new_tokens=12, do_sample=False, eos_token_id=[11, 2]
        )[0, prompt["input_ids"].shape[1] :]
    first = result.rounds[0]
    assert first.answer == generator.tokenizer.decode(expected, skip_special_tokens=True)
    assert first.prompt_tokens == prompt["input_ids"].shape[1]
    assert first.completion_tokens == expected.shape[0]
    if not first.verdict.passed:  # the tiny model's answers are noise: it is asked again
        assert len(result.rounds) == 2
        assert result.rounds[1].prompt_tokens > first.prompt_tokens + first.completion_tokens


def test_a_dead_endpoint_gets_one_clear_line() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]  # closed again when the block ends: nothing listens there
    generate = OpenAIGenerator(f"http://127.0.0.1:{port}/v1", "tiny", timeout=5)
    with pytest.raises(GenerationError) as caught:
        revise(generate, [{"role": "user", "content": "Answer in two words."}])
    assert str(caught.value) == (
        f"cannot reach http://127.0.0.1:{port}/v1: is the server running? Start one with "
        "`rsi-hub serve RUN` and pass its /v1 URL."
    )
