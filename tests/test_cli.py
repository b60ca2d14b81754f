"""Every sub-command answers --help; the main job runs on the embedded default."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from rsi_hub.cli import COMMAND_MODULES, main


def test_top_level_help_lists_every_command(capsys) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["--help"])
    assert exit_info.value.code == 0
    out = capsys.readouterr().out
    # The sub-command table: one indented name per entry, in registration order. Matching the
    # names anywhere in `out` would pass for words that only occur in the description.
    listed = re.findall(r"^ {4}([a-z][a-z-]*)(?: |$)", out, flags=re.MULTILINE)
    assert listed == [command.replace("_", "-") for command in COMMAND_MODULES]


@pytest.mark.parametrize(
    ("command", "absent", "present"),
    [
        ("compare", "%%", "bootstrap 95 % CI"),
        ("check", "`rsi-hub check FILE.jsonl", "Prints the prompt-level pass rate"),
    ],
)
def test_help_text_reads_as_written(command: str, absent: str, present: str, capsys) -> None:
    """No doubled percent sign (descriptions are not %-formatted); no second usage line."""
    with pytest.raises(SystemExit):
        main([command, "--help"])
    out = capsys.readouterr().out
    assert out.count("usage: rsi-hub") == 1
    assert absent not in out
    assert present in " ".join(out.split())


@pytest.mark.parametrize("command", COMMAND_MODULES)
def test_subcommand_help(command: str, capsys) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main([command.replace("_", "-"), "--help"])
    assert exit_info.value.code == 0
    assert "usage: rsi-hub" in capsys.readouterr().out


def test_tiny_cli_refuses_non_empty(tmp_path: Path, capsys) -> None:
    (tmp_path / "x").write_text("keep")
    assert main(["tiny", str(tmp_path)]) == 2
    assert "pass --force" in capsys.readouterr().err


@pytest.mark.slow
def test_demo_runs_the_whole_chain(nano_demo, capsys) -> None:
    from transformers import AutoTokenizer

    from rsi_hub.chat import validate_model_folder
    from rsi_hub.experiments.signal import SIGNAL_EVAL_PROMPTS, SIGNAL_MAX_NEW_TOKENS

    result = nano_demo
    # Both models were scored on the same held-out IF-818 prompts, round 0 passing more.
    assert result.prompts_scored == SIGNAL_EVAL_PROMPTS
    assert result.round0_passed > result.init_passed
    for run in (result.init_dir, result.run_dir):
        assert (run / "eval" / "if818" / "meta.json").is_file()
    # The release folder is staged, validated and loadable; its card and manifest are there.
    validate_model_folder(result.release_dir)
    assert (result.release_dir / "README.md").is_file()
    assert (result.release_dir / "release_manifest.json").is_file()
    # The answer is to an IF-818 prompt round 0 passed: every stated constraint is met, and the
    # model stopped on its own at <|im_end|>, before the token limit.
    assert result.checks_total >= 1 and result.checks_met == result.checks_total
    tokenizer = AutoTokenizer.from_pretrained(result.release_dir)
    assert 0 < len(tokenizer(result.reply).input_ids) < SIGNAL_MAX_NEW_TOKENS
    # What the README and the Space tell a new user to load is a model folder the demo wrote.
    root = Path(__file__).resolve().parents[1]
    docs = (root / "README.md").read_text() + (root / "space" / "app.py").read_text()
    patterns = (r'model="(runs/demo[^"]*)"', r"MODEL_ID=(runs/demo\S*)", r"release (runs/demo\S*)")
    for pattern in patterns:
        paths = re.findall(pattern, docs)
        assert paths, pattern
        for path in paths:
            assert (result.out / path.removeprefix("runs/demo/") / "config.json").is_file(), path


def test_demo_refuses_a_folder_it_did_not_write(tmp_path: Path, capsys) -> None:
    (tmp_path / "notes.txt").write_text("mine")
    assert main(["demo", "--out", str(tmp_path)]) == 2
    assert "the demo did not write" in capsys.readouterr().err
    assert (tmp_path / "notes.txt").read_text() == "mine"
