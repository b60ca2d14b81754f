"""Broken serving files are refused with the file, the field and the fix named."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from rsi_hub.chat import validate_model_folder, write_serving_files
from rsi_hub.cli import main
from rsi_hub.errors import ServingContractError


@pytest.fixture
def run_copy(tiny_run: Path, tmp_path: Path) -> Path:
    return Path(shutil.copytree(tiny_run, tmp_path / "run"))


def _edit_json(path: Path, **changes: object) -> None:
    data = json.loads(path.read_text())
    data.update(changes)
    path.write_text(json.dumps(data))


def test_fresh_tiny_run_is_valid(tiny_run: Path) -> None:
    validate_model_folder(tiny_run)


def test_missing_template_file(run_copy: Path) -> None:
    (run_copy / "chat_template.jinja").unlink()
    with pytest.raises(ServingContractError) as err:
        validate_model_folder(run_copy)
    message = str(err.value)
    assert f"{run_copy / 'chat_template.jinja'}: missing" in message
    assert f"rsi-hub validate {run_copy} --fix" in message


def test_edited_template_copy_in_tokenizer_config(run_copy: Path) -> None:
    config = run_copy / "tokenizer_config.json"
    data = json.loads(config.read_text())
    _edit_json(config, chat_template=data["chat_template"].replace("system", "System"))
    with pytest.raises(ServingContractError, match=r"tokenizer_config.json: field chat_template"):
        validate_model_folder(run_copy)


def test_edited_k0(run_copy: Path) -> None:
    (run_copy / "system_prompt.txt").write_text("Be helpful.\n")
    with pytest.raises(ServingContractError, match=r"system_prompt.txt: is not k0"):
        validate_model_folder(run_copy)


def test_im_end_not_id_11(run_copy: Path) -> None:
    path = run_copy / "tokenizer.json"
    data = json.loads(path.read_text())
    for entry in data["added_tokens"]:
        if entry["content"] == "<|im_end|>":
            entry["id"] = 12
    path.write_text(json.dumps(data))
    with pytest.raises(ServingContractError, match=r"token <\|im_end\|> has id 12, must be 11"):
        validate_model_folder(run_copy)


def test_eos_token_not_im_end(run_copy: Path) -> None:
    _edit_json(run_copy / "tokenizer_config.json", eos_token="</s>")
    with pytest.raises(ServingContractError, match=r"field eos_token is '</s>'"):
        validate_model_folder(run_copy)


@pytest.mark.parametrize("eos", [2, [11], None])
def test_generation_config_without_both_stop_ids(run_copy: Path, eos: object) -> None:
    _edit_json(run_copy / "generation_config.json", eos_token_id=eos)
    with pytest.raises(ServingContractError, match=r"generation_config.json: field eos_token_id"):
        validate_model_folder(run_copy)


def test_every_problem_listed_then_fix_repairs(run_copy: Path, capsys) -> None:
    (run_copy / "chat_template.jinja").unlink()
    _edit_json(run_copy / "generation_config.json", eos_token_id=2, do_sample=True)
    assert main(["validate", str(run_copy)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n  - ") == 3
    assert main(["validate", str(run_copy), "--fix"]) == 0
    assert "serving contract OK" in capsys.readouterr().out
    validate_model_folder(run_copy)


def test_write_serving_files_needs_a_tokenizer(tmp_path: Path) -> None:
    with pytest.raises(ServingContractError, match=r"tokenizer_config\.json is missing"):
        write_serving_files(tmp_path)


TOKENIZER_FIX = "save the tokenizer into {run} again (tokenizer.save_pretrained)."
CONFIG_FIX = "save the model's config into {run} again (model.config.save_pretrained)."
VALIDATE_FIX = "run `rsi-hub validate {run} --fix` to rewrite the serving files."


@pytest.mark.parametrize(
    ("file_name", "content", "problem"),
    [
        ("tokenizer_config.json", b"[]", "holds a JSON list, must be an object of fields; "),
        ("generation_config.json", b"null", "holds a JSON null, must be an object of fields; "),
        ("tokenizer.json", b"\xff\xfe{}", "not UTF-8 text (byte 0: invalid start byte); "),
        (
            "chat_template.jinja",
            b"{{ \xc3 }}",
            "not UTF-8 text (byte 3: invalid continuation byte); ",
        ),
        (
            "config.json",
            b'{"model_type": "nemotron_h", "hidden',
            "not valid JSON (Unterminated string starting at: line 1 column 30); ",
        ),
        ("config.json", b"{}", "field model_type is None, must name the architecture; "),
    ],
)
def test_unreadable_file_is_one_clear_problem(
    run_copy: Path, capsys, file_name: str, content: bytes, problem: str
) -> None:
    """Each of these was a traceback (or, for config.json, "serving contract OK") before."""
    (run_copy / file_name).write_bytes(content)
    fix = {"tokenizer": TOKENIZER_FIX, "config": CONFIG_FIX}.get(
        file_name.split(".")[0].split("_")[0], VALIDATE_FIX
    )
    assert main(["validate", str(run_copy)]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == (
        f"rsi-hub validate: error: {run_copy} breaks the serving contract:\n"
        f"  - {run_copy / file_name}: {problem}{fix.format(run=run_copy)}\n"
    )


def test_fix_rewrites_an_unreadable_generation_config(run_copy: Path, capsys) -> None:
    (run_copy / "generation_config.json").write_text("null")
    assert main(["validate", str(run_copy), "--fix"]) == 0
    assert capsys.readouterr().out == f"{run_copy}: serving contract OK\n"
    generation = json.loads((run_copy / "generation_config.json").read_text())
    assert generation["eos_token_id"] == [11, 2]


@pytest.mark.parametrize(
    ("remove", "lacks"),
    [
        (("config.json", "model.safetensors"), "config.json / weights"),
        (("config.json",), "config.json"),
        (("model.safetensors",), "weights (model*.safetensors)"),
    ],
)
def test_not_a_model_folder(run_copy: Path, remove: tuple[str, ...], lacks: str) -> None:
    for name in remove:
        (run_copy / name).unlink()
    with pytest.raises(ServingContractError) as err:
        validate_model_folder(run_copy)
    assert str(err.value) == (
        f"{run_copy}: not a model folder (no {lacks}); pass a run directory (what "
        "`rsi-hub train` or `rsi-hub tiny` writes) or a staged release."
    )
