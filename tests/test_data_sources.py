"""Sources, converters, mixes and the input refusals of the holdout rule (no tokenizer needed)."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from rsi_hub.data import (
    SOURCES,
    load_source,
    parse_mix,
    parse_source_overrides,
    to_messages,
    to_preference,
)
from rsi_hub.data.convert import UnrecognisedRow
from rsi_hub.data.mix import MixItem, format_mix
from rsi_hub.errors import DataSourceError, HoldoutInputError, MixSpecError


def test_registry_has_every_card_source() -> None:
    expected = {
        "tulu3": "allenai/tulu-3-sft-mixture",
        "ultrachat": "HuggingFaceH4/ultrachat_200k",
        "smoltalk": "HuggingFaceTB/smoltalk",
        "numina": "AI-MO/NuminaMath-CoT",
        "dpo_ufb": "HuggingFaceH4/ultrafeedback_binarized",
    }
    for name, hf_id in expected.items():
        assert SOURCES[name].hf_id == hf_id
    assert SOURCES["dpo_ufb"].split == "train_prefs" and SOURCES["dpo_ufb"].kind == "pref"
    assert SOURCES["magpie"].hf_id.startswith("Magpie-Align/")
    assert SOURCES["openthoughts"].hf_id.startswith("open-thoughts/")
    for name in ("iflensyn", "rft", "phr1", "phrw"):
        assert SOURCES[name].hf_id is None and SOURCES[name].local_default.endswith(".jsonl")


@pytest.mark.parametrize(
    ("spec", "items"),
    [
        ("tulu3:all,smoltalk:all,magpie:all,numina:all",
         [MixItem("tulu3", None), MixItem("smoltalk", None), MixItem("magpie", None), MixItem("numina", None)]),
        ("iflensyn:33000", [MixItem("iflensyn", 33000)]),
        ("phr1:all,phrw:all,iflensyn:6000", [MixItem("phr1", None), MixItem("phrw", None), MixItem("iflensyn", 6000)]),
        (" tulu3 , iflensyn:33_000", [MixItem("tulu3", None), MixItem("iflensyn", 33000)]),
    ],
)  # fmt: skip
def test_parse_mix_card_specs(spec: str, items: list[MixItem]) -> None:
    assert parse_mix(spec) == items
    assert parse_mix(format_mix(items)) == items


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("", "empty mix"),
        ("tulu4:all", "unknown source 'tulu4'"),
        ("tulu3:some", "is not `name:all`"),
        ("tulu3:0", "must be positive"),
        ("tulu3:all,tulu3:10", "twice"),
        ("tulu3:all,dpo_ufb:all", "preference sources"),
    ],
)
def test_parse_mix_errors(spec: str, message: str) -> None:
    with pytest.raises(MixSpecError, match=message):
        parse_mix(spec)


def test_source_overrides() -> None:
    assert parse_source_overrides(["tulu3=/d/t.jsonl", "magpie = m/"]) == {
        "tulu3": "/d/t.jsonl",
        "magpie": "m/",
    }
    with pytest.raises(MixSpecError, match="NAME=PATH"):
        parse_source_overrides(["tulu3"])
    with pytest.raises(MixSpecError, match="unknown source"):
        parse_source_overrides(["nope=x"])


def test_converters_of_each_row_shape() -> None:
    chat = [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hello."}]
    assert to_messages({"messages": chat, "id": "x"}) == chat  # tulu3, smoltalk, ultrachat
    sharegpt = {
        "conversations": [{"from": "human", "value": "Hi"}, {"from": "gpt", "value": "Hello."}]
    }
    assert to_messages(sharegpt) == chat  # magpie
    thoughts = {
        "system": "Think.",
        "conversations": [
            {"from": "user", "value": "Hi"},
            {"from": "assistant", "value": "Hello."},
        ],
    }
    assert to_messages(thoughts) == [{"role": "system", "content": "Think."}, *chat]  # openthoughts
    assert to_messages({"problem": "Hi", "solution": "Hello."}) == chat  # numina without messages
    assert to_messages({"prompt": "Hi", "response": "Hello."}) == chat  # synthetic JSONL
    parts = {"messages": [{"role": "user", "content": [{"type": "text", "text": "Hi"}]}, chat[1]]}
    assert to_messages(parts) == chat


def test_unusable_rows_are_none_and_unknown_shapes_raise() -> None:
    assert to_messages({"messages": [{"role": "user", "content": "Hi"}]}) is None  # no answer
    assert (
        to_messages(
            {"messages": [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": " "}]}
        )
        is None
    )
    assert (
        to_messages(
            {"messages": [{"role": "tool", "content": "x"}, {"role": "assistant", "content": "y"}]}
        )
        is None
    )
    with pytest.raises(UnrecognisedRow, match="none of the shapes"):
        to_messages({"text": "plain"})


def test_preference_converter_ultrafeedback_shape() -> None:
    row = {
        "prompt": "Hi",
        "chosen": [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hello."}],
        "rejected": [
            {"role": "user", "content": "Hi"},
            {"role": "assistant", "content": "Go away."},
        ],
    }
    pair = to_preference(row)
    assert pair is not None
    assert pair.prompt == [{"role": "user", "content": "Hi"}]
    assert (pair.chosen, pair.rejected) == ("Hello.", "Go away.")
    assert to_preference({"prompt": "Hi", "chosen": "A", "rejected": "B"}).chosen == "A"
    with pytest.raises(UnrecognisedRow):
        to_preference({"prompt": "Hi"})


def _write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def test_local_override_file_and_folder(tmp_path: Path) -> None:
    rows = [
        {"messages": [{"role": "user", "content": f"q{i}"}, {"role": "assistant", "content": "a"}]}
        for i in range(3)
    ]
    one = _write_jsonl(tmp_path / "one.jsonl", rows)
    assert len(load_source("tulu3", one)) == 3
    _write_jsonl(tmp_path / "folder" / "a.jsonl", rows)
    _write_jsonl(tmp_path / "folder" / "b.jsonl", rows[:1])
    assert len(load_source("tulu3", tmp_path / "folder")) == 4


@pytest.mark.parametrize("name", ["prompts_if818.jsonl", "prompts.jsonl", "Prompts_v4.jsonl"])
def test_refuses_prompts_files(tmp_path: Path, name: str) -> None:
    rows = [{"prompt": "p", "response": "r"}]
    with pytest.raises(HoldoutInputError, match="never training data"):
        load_source("iflensyn", _write_jsonl(tmp_path / name, rows))
    # ...also when hidden inside a folder source.
    _write_jsonl(tmp_path / "folder" / "ok.jsonl", rows)
    _write_jsonl(tmp_path / "folder" / "sub" / name, rows)
    with pytest.raises(HoldoutInputError, match=name):
        load_source("iflensyn", tmp_path / "folder")


def test_offline_hub_source_fails_fast_with_a_way_out(tmp_path: Path) -> None:
    start = time.monotonic()
    with pytest.raises(DataSourceError) as info:
        load_source("tulu3", cache_dir=str(tmp_path / "empty-cache"))
    assert time.monotonic() - start < 15
    message = str(info.value)
    assert "allenai/tulu-3-sft-mixture" in message and "OFFLINE" in message
    assert "--source tulu3=PATH" in message


def test_missing_local_synthetic_set_says_how_to_fix(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(DataSourceError, match="--source iflensyn=PATH"):
        load_source("iflensyn")


def test_shipped_demo_sets_load() -> None:
    demo = load_source("demo")
    assert len(demo) >= 30 and all(to_messages(row) for row in demo)
    pref = load_source("demo_pref")
    assert len(pref) >= 10 and all(to_preference(row) for row in pref)
