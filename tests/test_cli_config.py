"""Config dataclasses generate the CLI: help, defaults and validation come from one place."""

from __future__ import annotations

import argparse
import dataclasses
import re

import pytest

from rsi_hub.cli import build_parser, main
from rsi_hub.cli.dataclass_args import add_dataclass_arguments, dataclass_from_args
from rsi_hub.data.config import PrepConfig
from rsi_hub.errors import ConfigError, RsiHubError
from rsi_hub.evaluate.config import EvalConfig
from rsi_hub.synth.backends import SamplingSettings
from rsi_hub.synth.config import SynthConfig

SYNTH_REQUIRED = ["--model", "M", "--out", "O"]
PREP_REQUIRED = ["--mix", "demo:all", "--out", "O"]
# (config class, the argv prefix of its command, the required arguments)
COMMANDS = [
    (EvalConfig, ["eval"], ["RUN"]),
    (SynthConfig, ["synth", "lensyn"], SYNTH_REQUIRED),
    (SynthConfig, ["synth", "rft"], SYNTH_REQUIRED),
    (PrepConfig, ["prep"], PREP_REQUIRED),
]
CONFIGS = {"eval": EvalConfig, "synth": SynthConfig, "prep": PrepConfig}


def _help(argv: list[str], capsys: pytest.CaptureFixture[str], monkeypatch) -> str:
    monkeypatch.setenv("COLUMNS", "2000")  # no wrapping inside a long default (a Hub id)
    with pytest.raises(SystemExit) as done:
        build_parser().parse_args([*argv, "--help"])
    assert done.value.code == 0
    # argparse wraps lines: compare with white space collapsed.
    return re.sub(r"\s+", " ", capsys.readouterr().out)


@pytest.mark.parametrize(("cls", "argv", "required"), COMMANDS)
def test_help_lists_every_field_with_its_help_and_default(
    cls: type,
    argv: list[str],
    required: list[str],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    text = _help(argv, capsys, monkeypatch)
    shown = 0
    for f in dataclasses.fields(cls):
        if not f.metadata.get("cli", True):
            flag = "--" + f.name.replace("_", "-")
            assert f"{flag} " not in text, f"{f.name} is library-only"
            continue
        shown += 1
        name = (
            f.metadata["metavar"]
            if f.metadata.get("positional")
            else f.metadata.get("flag", "--" + f.name.replace("_", "-"))
        )
        assert f" {name}" in text, name
        expected = re.sub(r"\s+", " ", f.metadata["help"])
        hidden = f.default is None or f.default is False or f.default in ((), dataclasses.MISSING)
        if not hidden and "action" not in f.metadata:
            expected += f" (default {f.default})"
        assert expected in text, f"{f.name}: {expected!r} not in --help"
    assert shown >= 3


@pytest.mark.parametrize(("cls", "argv", "required"), COMMANDS)
def test_unset_options_take_the_dataclass_defaults(
    cls: type, argv: list[str], required: list[str]
) -> None:
    args = build_parser().parse_args([*argv, *required])
    config = dataclass_from_args(cls, args, **({"mode": argv[1]} if argv[0] == "synth" else {}))
    for f in dataclasses.fields(cls):
        if f.default is not dataclasses.MISSING:
            assert getattr(config, f.name) == f.default, f.name


def test_a_default_changed_in_the_dataclass_shows_in_the_cli(
    capsys: pytest.CaptureFixture[str],
) -> None:
    original = next(f for f in dataclasses.fields(EvalConfig) if f.name == "suite")

    @dataclasses.dataclass
    class Changed(EvalConfig):
        suite: str = dataclasses.field(default="if263", metadata=original.metadata)

    parser = argparse.ArgumentParser(prog="changed")
    add_dataclass_arguments(parser, Changed)
    assert dataclass_from_args(Changed, parser.parse_args(["RUN"])).suite == "if263"
    assert dataclass_from_args(Changed, parser.parse_args(["RUN", "--suite", "ev4"])).suite == "ev4"
    parser.print_help()
    assert "(default if263)" in re.sub(r"\s+", " ", capsys.readouterr().out)


@pytest.mark.parametrize(
    ("argv", "field", "message"),
    [
        (["eval", "RUN", "--limit", "0"], "limit", "--limit must be at least 1, got 0"),
        (["eval", "RUN", "--batch-size", "0"], "batch_size", "--batch-size must be at least 1"),
        (
            ["eval", "RUN", "--data-parallel-size", "-1"],
            "data_parallel_size",
            "--data-parallel-size must be at least 1",
        ),
        (
            ["eval", "RUN", "--system-prompt-id", "x"],
            "system_prompt_id",
            "--system-prompt-id needs --system-prompt-file",
        ),
        (
            ["eval", "RUN", "--system-prompt-file", "p.txt", "--system-prompt-id", "../k0"],
            "system_prompt_id",
            "use letters, digits",
        ),
        (["synth", "rft", *SYNTH_REQUIRED, "--limit", "0"], "limit", "--limit must be at least 1"),
        (["synth", "lensyn", *SYNTH_REQUIRED, "--k", "0"], "k", "--k must be at least 1, got 0"),
        (["synth", "rft", *SYNTH_REQUIRED, "--top-p", "1.5"], "top_p", "--top-p must be in (0, 1]"),
        (
            ["synth", "rft", *SYNTH_REQUIRED, "--temperature", "-1"],
            "temperature",
            "--temperature must be 0 (greedy) or more",
        ),
        (["prep", *PREP_REQUIRED, "--max-length", "0"], "max_length", "--max-length must be at"),
    ],
)
def test_bad_values_raise_our_config_error(
    argv: list[str], field: str, message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    extra = {"mode": argv[1]} if argv[0] == "synth" else {}
    with pytest.raises(ConfigError, match=re.escape(message)) as err:
        dataclass_from_args(CONFIGS[argv[0]], build_parser().parse_args(argv), **extra)
    assert err.value.field == field
    assert isinstance(err.value, ValueError) and isinstance(err.value, RsiHubError)
    # The CLI prints it as one line and exits 2, before any work.
    assert main(argv) == 2
    assert message in capsys.readouterr().err


def test_missing_system_prompt_file_names_the_path(tmp_path) -> None:
    missing = tmp_path / "nope.txt"
    config = EvalConfig(tmp_path, system_prompt_file=str(missing))
    assert config.system_prompt_id == "nope"  # the file's stem
    with pytest.raises(OSError, match="no such file") as err:
        config.candidate_text()
    assert (err.value.path, err.value.field) == (missing, "system_prompt_file")


def test_synth_sampling_defaults_are_sampling_settings_own() -> None:
    config = SynthConfig("rft", "M", "O")
    assert config.sampling == SamplingSettings()
    args = build_parser().parse_args(["synth", "rft", *SYNTH_REQUIRED, "--only-checks", "a, b"])
    config = dataclass_from_args(SynthConfig, args, mode="rft")
    assert config.check_types == ("a", "b") and config.force is False
    args = build_parser().parse_args(["synth", "rft", *SYNTH_REQUIRED, "--force", "--top-p", "0.5"])
    config = dataclass_from_args(SynthConfig, args, mode="rft")
    assert config.force is True and config.sampling == SamplingSettings(top_p=0.5)


def test_prep_flags_map_to_fields() -> None:
    argv = ["prep", *PREP_REQUIRED, "--no-holdout-guard", "--seed", "3"]
    argv += ["--source", "iflensyn=a.jsonl", "--source", "phr1=b/"]
    config = dataclass_from_args(PrepConfig, build_parser().parse_args(argv))
    assert config == PrepConfig(
        "demo:all", "O", sources={"iflensyn": "a.jsonl", "phr1": "b/"}, seed=3, holdout_guard=False
    )
    assert dataclass_from_args(PrepConfig, build_parser().parse_args(["prep", *PREP_REQUIRED])) == (
        PrepConfig("demo:all", "O")
    )
    with pytest.raises(ConfigError, match="--system must be one of keep, k0, none") as err:
        PrepConfig("demo:all", "O", system="k1")  # type: ignore[arg-type]
    assert err.value.field == "system"
