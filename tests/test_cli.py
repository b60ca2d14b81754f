"""Every sub-command answers --help; the main job runs on the embedded default."""

from __future__ import annotations

from pathlib import Path

import pytest

from rsi_hub.cli import COMMAND_MODULES, main


def test_top_level_help_lists_every_command(capsys) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["--help"])
    assert exit_info.value.code == 0
    out = capsys.readouterr().out
    for command in COMMAND_MODULES:
        assert command.replace("_", "-") in out


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


def test_demo_prints_prompt_and_reply(tmp_path: Path, capsys) -> None:
    assert main(["demo", "--out", str(tmp_path / "demo"), "--max-new-tokens", "4"]) == 0
    out = capsys.readouterr().out
    assert "<|im_start|>system\nYou follow instructions precisely." in out
    assert "<|im_start|>user\nDescribe a lighthouse in exactly twelve words.<|im_end|>" in out
    assert "==> reply" in out
