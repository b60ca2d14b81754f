"""PREF: the loader for preference pairs (demo file, local JSONL, the Hub offline)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from rsi_hub.errors import PrefSourceError
from rsi_hub.suites import PrefPair, load_pref


def test_demo_pairs_load() -> None:
    pairs = list(load_pref("pref_demo"))
    assert 24 <= len(pairs) <= 60
    for pair in pairs:
        assert isinstance(pair, PrefPair)
        assert pair.prompt[-1]["role"] == "user" and pair.prompt[-1]["content"]
        assert pair.chosen and pair.rejected and pair.chosen != pair.rejected


def test_local_jsonl_in_several_shapes(tmp_path: Path) -> None:
    rows = [
        {"prompt": "Hi?", "chosen": [{"role": "user", "content": "Hi?"}, {"role": "assistant", "content": "Hello!"}],
         "rejected": [{"role": "user", "content": "Hi?"}, {"role": "assistant", "content": "Go away."}]},
        {"prompt": [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "2+2?"}],
         "chosen": [{"role": "assistant", "content": "4"}], "rejected": "5"},
    ]  # fmt: skip
    path = tmp_path / "prefs.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    first, second = load_pref(path)
    assert first == PrefPair([{"role": "user", "content": "Hi?"}], "Hello!", "Go away.")
    assert second.prompt[0]["role"] == "system" and (second.chosen, second.rejected) == ("4", "5")


def test_bad_local_rows_name_line_and_field(tmp_path: Path) -> None:
    path = tmp_path / "prefs.jsonl"
    path.write_text(
        '{"prompt": "a", "chosen": "b", "rejected": "c"}\n{"prompt": "a", "chosen": "b"}\n'
    )
    with pytest.raises(PrefSourceError, match=r"prefs\.jsonl:2: field 'rejected': missing"):
        load_pref(path)
    with pytest.raises(PrefSourceError, match="no such preference file"):
        load_pref(tmp_path / "missing.jsonl")


def test_hub_source_fails_fast_offline_with_a_clear_message() -> None:
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "PYTHONPATH": "."}
    env["HF_HOME"] = str(Path("/tmp") / f"rsi-hub-empty-hf-{os.getpid()}")  # an empty cache
    code = (
        "from rsi_hub.suites import load_pref\n"
        "try:\n    load_pref()\nexcept Exception as e:\n    print(type(e).__name__, e)\n"
    )
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120
    )
    assert time.monotonic() - started < 60
    assert done.stdout.startswith("PrefSourceError"), done.stdout + done.stderr
    assert "offline" in done.stdout and "local JSONL" in done.stdout
