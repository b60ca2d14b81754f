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


def test_demo_runs_the_whole_chain(tmp_path: Path, capsys) -> None:
    from transformers import AutoTokenizer

    from rsi_hub.chat import validate_model_folder
    from rsi_hub.demo import run_demo

    workdir = tmp_path / "demo"
    result = run_demo(workdir, eval_limit=4, max_new_tokens=48)
    out = capsys.readouterr().out
    for step in range(1, 6):
        assert f"==> [{step}/5]" in out
    # SFT lowered the loss, IF-818 was scored on 4 prompts and the results were written.
    assert result.if818_scored == 4
    assert 0 <= result.if818_passed <= 4
    assert (result.run_dir / "eval" / "if818" / "meta.json").is_file()
    # The release folder is staged, validated and loadable; its card and manifest are there.
    validate_model_folder(result.release_dir)
    assert (result.release_dir / "README.md").is_file()
    assert (result.release_dir / "release_manifest.json").is_file()
    # The trained tiny model stops on its own at <|im_end|>, well before the token limit.
    tokenizer = AutoTokenizer.from_pretrained(result.release_dir)
    assert 0 < len(tokenizer(result.reply).input_ids) < 48
    # The default message states three constraints, each judged by the checker.
    assert result.checks_total == 3
    assert "exactly 7 words" in out and "ends with" in out
    # What the README and the Space tell a new user to load is a model folder the demo wrote.
    root = Path(__file__).resolve().parents[1]
    docs = (root / "README.md").read_text() + (root / "space" / "app.py").read_text()
    patterns = (r'model="(runs/demo[^"]*)"', r"MODEL_ID=(runs/demo\S*)", r"release (runs/demo\S*)")
    for pattern in patterns:
        paths = re.findall(pattern, docs)
        assert paths, pattern
        for path in paths:
            assert (workdir / path.removeprefix("runs/demo/") / "config.json").is_file(), path


def test_demo_refuses_a_folder_it_did_not_write(tmp_path: Path, capsys) -> None:
    (tmp_path / "notes.txt").write_text("mine")
    assert main(["demo", "--out", str(tmp_path)]) == 2
    assert "the demo did not write" in capsys.readouterr().err
    assert (tmp_path / "notes.txt").read_text() == "mine"
