"""Prep on the tiny tokenizer: assistant masks, system policies, the guard, sha256, stats."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rsi_hub.chat import IM_END_TOKEN, SPECIAL_TOKEN_IDS, load_system_prompt, render
from rsi_hub.data import (
    apply_system_policy,
    conversation_segments,
    load_prepared,
    prepare,
    read_stats,
    tokenise_conversation,
)
from rsi_hub.data.config import PrepConfig
from rsi_hub.data.holdout import HoldoutGuard
from rsi_hub.errors import HoldoutInputError, OutputDirNotEmptyError

MULTI_TURN = [
    {"role": "system", "content": "Be brief."},
    {"role": "user", "content": "What is the capital of France?"},
    {"role": "assistant", "content": "The capital of France is Paris."},
    {"role": "user", "content": "And of Spain?"},
    {"role": "assistant", "content": "Madrid.\nIt is in the centre."},
]


class SetMatcher:
    """A stand-in for rsi_hub.suites.HoldoutIndex: exact match after lower-casing and stripping."""

    def __init__(self, prompts: dict[str, str]) -> None:
        self.prompts = {p.strip().lower(): hid for hid, p in prompts.items()}

    def match(self, prompt: str) -> str | None:
        return self.prompts.get(prompt.strip().lower())


@pytest.fixture(scope="module")
def tokenizer(tiny_run: Path):
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(tiny_run)


def _supervised_text(tokenizer, ids: list[int], mask: list[int]) -> str:
    return tokenizer.decode([i for i, m in zip(ids, mask, strict=True) if m])


def test_multi_turn_supervised_tokens_decode_to_the_answers_exactly(tokenizer) -> None:
    row = tokenise_conversation(tokenizer, MULTI_TURN)
    expected = (
        f"The capital of France is Paris.{IM_END_TOKEN}Madrid.\nIt is in the centre.{IM_END_TOKEN}"
    )
    assert _supervised_text(tokenizer, row.input_ids, row.assistant_masks) == expected
    # Every token together is the served rendering, and ends on the template's newline.
    full = render(MULTI_TURN, add_generation_prompt=False, use_default_system_prompt=False)
    assert tokenizer.decode(row.input_ids) == full
    assert row.assistant_masks[-1] == 0
    # Each supervised span ends with <|im_end|> (id 11) and starts right after "assistant\n".
    im_end = SPECIAL_TOKEN_IDS[IM_END_TOKEN]
    ends = [
        i
        for i in range(len(row.input_ids))
        if row.assistant_masks[i] and not row.assistant_masks[i + 1]
    ]
    assert [row.input_ids[i] for i in ends] == [im_end, im_end]


def test_segments_match_whole_text_tokenisation_on_the_demo_set(tokenizer) -> None:
    from rsi_hub.data import load_source, to_messages

    for raw in load_source("demo"):
        messages = apply_system_policy(to_messages(raw), "k0")
        text = render(messages, add_generation_prompt=False, use_default_system_prompt=False)
        assert "".join(t for t, _ in conversation_segments(messages)) == text
        row = tokenise_conversation(tokenizer, messages)
        assert row.input_ids == tokenizer(text, add_special_tokens=False)["input_ids"]


def test_system_policies() -> None:
    body = MULTI_TURN[1:]
    k0 = load_system_prompt()
    assert apply_system_policy(MULTI_TURN, "keep") == MULTI_TURN
    assert apply_system_policy(body, "keep") == body
    assert apply_system_policy(MULTI_TURN, "k0")[0] == {"role": "system", "content": k0}
    assert apply_system_policy(body, "k0")[1:] == body
    assert apply_system_policy(MULTI_TURN, "none") == body


def _rows(n: int) -> list[dict]:
    return [
        {
            "messages": [
                {"role": "user", "content": f"Question number {i}?"},
                {"role": "assistant", "content": f"Answer {i}."},
            ]
        }
        for i in range(n)
    ]


@pytest.fixture
def sft_file(tmp_path: Path) -> Path:
    path = tmp_path / "src" / "synthetic.jsonl"
    path.parent.mkdir()
    rows = _rows(40)
    rows.append({"messages": [{"role": "user", "content": "Only a question"}]})  # unusable
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def test_prep_is_reproducible_and_reports_card_columns(
    tokenizer, sft_file: Path, tmp_path: Path
) -> None:
    kwargs = {"sources": {"iflensyn": str(sft_file)}, "holdout_guard": False}

    def prep(mix: str, out: Path, **options: object):
        return prepare(PrepConfig(mix, out, **kwargs, **options), tokenizer=tokenizer)

    first = prep("iflensyn:25", tmp_path / "a", seed=981)
    second = prep("iflensyn:25", tmp_path / "b", seed=981)
    assert first.sha256 == second.sha256 and len(first.sha256) == 64
    other_seed = prep("iflensyn:25", tmp_path / "c", seed=1)
    assert other_seed.sha256 != first.sha256
    everything = prep("iflensyn:all", tmp_path / "d")

    stats = read_stats(first.path)
    assert stats["sha256"] == first.sha256 and "uint32-LE" in stats["sha256_definition"]
    row = stats["table"][0]
    assert set(row) == {"short name", "source", "samples", "tokens", "supervised fraction"}
    assert row["samples"] == 25 and 0 < row["supervised fraction"] < 1
    assert everything.stats["sources"]["iflensyn"]["samples"] == 40
    assert everything.stats["sources"]["iflensyn"]["dropped_unusable"] == 1
    data = load_prepared(first.path)
    assert data.column_names == ["input_ids", "assistant_masks", "source"]
    assert sum(len(r) for r in data["input_ids"]) == stats["total"]["tokens"]
    assert sum(sum(m) for m in data["assistant_masks"]) == stats["total"]["supervised_tokens"]


def test_prep_drops_too_long_rows_instead_of_cutting_them(
    tokenizer, sft_file: Path, tmp_path: Path
) -> None:
    config = PrepConfig("iflensyn:all", tmp_path / "out", sources={"iflensyn": str(sft_file)},
                        holdout_guard=False, max_length=12)  # fmt: skip
    result = prepare(config, tokenizer=tokenizer)
    assert result.stats["total"]["dropped_too_long"] > 0
    assert all(len(ids) <= 12 for ids in load_prepared(result.path)["input_ids"])


def test_holdout_guard_drops_and_counts_matches(tokenizer, sft_file: Path, tmp_path: Path) -> None:
    matcher = SetMatcher({"if818-0003": "question number 3?", "if3k-0017": "  QUESTION NUMBER 17?"})
    config = PrepConfig("iflensyn:all", tmp_path / "out", sources={"iflensyn": str(sft_file)})
    result = prepare(config, tokenizer=tokenizer, holdout_matcher=matcher)
    holdout = result.stats["holdout"]
    assert holdout["dropped"] == 2 and sorted(holdout["matched_ids_sample"]) == [
        "if3k-0017",
        "if818-0003",
    ]
    assert result.stats["sources"]["iflensyn"]["dropped_holdout"] == 2
    assert result.samples == 38
    texts = [tokenizer.decode(ids) for ids in load_prepared(result.path)["input_ids"]]
    assert not any("Question number 3?" in t or "Question number 17?" in t for t in texts)


def test_guard_needs_a_match_method() -> None:
    with pytest.raises(TypeError):
        HoldoutGuard(object())  # type: ignore[arg-type]


def test_guard_is_not_skipped_silently(
    tokenizer, sft_file: Path, tmp_path: Path, monkeypatch
) -> None:
    import rsi_hub.data.prep as prep_module

    def unavailable():
        raise HoldoutInputError("the holdout guard needs rsi_hub.suites")

    monkeypatch.setattr(prep_module, "default_holdout_matcher", unavailable)
    with pytest.raises(HoldoutInputError, match="holdout guard"):
        prepare(
            PrepConfig("iflensyn:all", tmp_path / "out", sources={"iflensyn": str(sft_file)}),
            tokenizer=tokenizer,
        )


def test_prep_refuses_non_empty_output(tokenizer, sft_file: Path, tmp_path: Path) -> None:
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "keep.txt").write_text("x")
    with pytest.raises(OutputDirNotEmptyError):
        prepare(PrepConfig("iflensyn:all", tmp_path / "out", sources={"iflensyn": str(sft_file)},
                           holdout_guard=False), tokenizer=tokenizer)  # fmt: skip


def test_preference_prep_renders_strings_ending_at_im_end(tokenizer, tmp_path: Path) -> None:
    result = prepare(
        PrepConfig("demo_pref:all", tmp_path / "pref", holdout_guard=False, system="k0"),
        tokenizer=tokenizer,
    )
    data = load_prepared(result.path)
    assert result.stats["kind"] == "pref" and len(data) == result.samples >= 10
    for row in data:
        assert row["prompt"].startswith("<|im_start|>system\n" + load_system_prompt())
        assert row["prompt"].endswith("<|im_start|>assistant\n")
        for answer in (row["chosen"], row["rejected"]):
            assert answer.endswith(IM_END_TOKEN) and answer.count(IM_END_TOKEN) == 1
    again = prepare(
        PrepConfig("demo_pref:all", tmp_path / "pref2", holdout_guard=False, system="k0"),
        tokenizer=tokenizer,
    )
    assert again.sha256 == result.sha256


def test_prep_cli_prints_the_table(tiny_run: Path, sft_file: Path, tmp_path: Path, capsys) -> None:
    from rsi_hub.cli import main

    out = tmp_path / "cli"
    code = main(["prep", "--mix", "iflensyn:10", "--source", f"iflensyn={sft_file}", "--tokenizer", str(tiny_run),
                 "--out", str(out), "--no-holdout-guard", "--seed", "3"])  # fmt: skip
    assert code == 0
    printed = capsys.readouterr().out
    assert "short name\tsource\tsamples\ttokens\tsupervised fraction" in printed
    assert f"sha256 {read_stats(out)['sha256']}" in printed
    assert "never training data" not in capsys.readouterr().err
    bad = main(["prep", "--mix", "iflensyn:all", "--source", f"iflensyn={tmp_path / 'prompts_x.jsonl'}",
                "--tokenizer", str(tiny_run), "--out", str(tmp_path / "x"), "--no-holdout-guard"])  # fmt: skip
    assert bad == 2
    assert "never training data" in capsys.readouterr().err


def test_default_guard_uses_the_suite_index(tokenizer, tmp_path: Path) -> None:
    from rsi_hub.suites import load_suite

    exact = load_suite("if818").rows[0]["prompt"]
    edited = (
        "Please: " + load_suite("if3k").rows[5]["prompt"].upper() + " Thanks!"
    )  # near-duplicate
    held_out = [
        {"messages": [{"role": "user", "content": exact}, {"role": "assistant", "content": "A."}]},
        {"messages": [{"role": "user", "content": edited}, {"role": "assistant", "content": "B."}]},
    ]
    rows = [*_rows(5), *held_out]
    path = tmp_path / "synthetic.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    result = prepare(
        PrepConfig("iflensyn:all", tmp_path / "out", sources={"iflensyn": str(path)}),
        tokenizer=tokenizer,
    )
    holdout = result.stats["holdout"]
    assert holdout["guard"] == "HoldoutIndex" and holdout["dropped"] == 2
    assert holdout["matched_ids_sample"][0] == load_suite("if818").rows[0]["id"]
    assert result.samples == 5
