"""`rsi-hub serve`: the exact engine command lines, the dry run, and refusals (no server started)."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest

from rsi_hub.cli import main
from rsi_hub.errors import EngineNotInstalledError, ServingContractError, ServingError
from rsi_hub.serving import engine_command
from rsi_hub.serving.launch import check_engine_installed

SERVED_KWARGS = '{"enable_thinking": false, "use_default_system_prompt": true}'


def test_transformers_command_is_transformers_serve_with_the_served_kwargs(tiny_run: Path) -> None:
    command = engine_command(tiny_run, port=8123)
    model = str(tiny_run.resolve())
    assert command.argv == (
        sys.executable,
        "-m",
        "rsi_hub.serving.transformers_engine",
        "serve",
        model,
        "--host",
        "127.0.0.1",
        "--port",
        "8123",
        "--dtype",
        "auto",
        "--chat-template-kwargs",
        SERVED_KWARGS,
    )
    assert command.model_id == model and command.base_url == "http://127.0.0.1:8123/v1"
    # The engine takes these from the folder, which validation has checked.
    generation = json.loads((tiny_run / "generation_config.json").read_text())
    assert generation["eos_token_id"] == [11, 2] and generation["do_sample"] is False


def test_vllm_command_line(tiny_run: Path) -> None:
    command = engine_command(tiny_run, engine="vllm", host="0.0.0.0", port=9000)
    model = str(tiny_run.resolve())
    assert command.shell() == (
        f"vllm serve {model} --host 0.0.0.0 --port 9000 --dtype auto --max-model-len 8192 "
        f"--chat-template {model}/chat_template.jinja "
        f"--default-chat-template-kwargs '{SERVED_KWARGS}' "
        "--generation-config auto --override-generation-config '{\"temperature\": 0.0}'"
    )


def test_dry_run_prints_the_command_and_what_clients_send(tiny_run: Path, capsys) -> None:
    assert main(["serve", str(tiny_run), "--port", "8124", "--dry-run"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out == [
        engine_command(tiny_run, port=8124).shell(),
        f"# clients: base_url=http://127.0.0.1:8124/v1 model={tiny_run.resolve()} temperature=0",
    ]


def test_a_folder_failing_validate_is_refused_with_every_problem(
    tiny_run: Path, tmp_path: Path, capsys
) -> None:
    run = tmp_path / "run"
    shutil.copytree(tiny_run, run)
    (run / "chat_template.jinja").write_text("{{ messages }}", encoding="utf-8")
    generation = json.loads((run / "generation_config.json").read_text())
    generation["eos_token_id"] = 11
    (run / "generation_config.json").write_text(json.dumps(generation))
    with pytest.raises(ServingContractError) as refused:
        engine_command(run, engine="vllm")
    problems = str(refused.value).splitlines()[1:]
    assert problems == [
        f"  - {run}/chat_template.jinja: differs from the served template; run `rsi-hub "
        f"validate {run} --fix` to rewrite the serving files.",
        f"  - {run}/generation_config.json: field eos_token_id is 11, must hold both stop ids "
        f"[11, 2] (<|im_end|> and </s>); run `rsi-hub validate {run} --fix` to rewrite the "
        "serving files.",
    ]
    assert main(["serve", str(run), "--dry-run"]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""  # no command printed for a refused folder
    assert captured.err.startswith(f"rsi-hub serve: error: {run} breaks the serving contract:")


def test_vllm_not_installed_is_one_line_naming_the_fix(
    tiny_run: Path, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    # This machine has no vLLM; make that true on any machine the suite runs on.
    monkeypatch.setattr("rsi_hub.serving.launch.find_spec", lambda name: None)
    with pytest.raises(EngineNotInstalledError):
        check_engine_installed("vllm")
    assert main(["serve", str(tiny_run), "--engine", "vllm"]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == (
        "rsi-hub serve: error: --engine vllm: vLLM is not installed here (it needs a CUDA GPU); "
        "on a GPU machine run `pip install vllm`, or serve on this machine with "
        "--engine transformers.\n"
    )


def test_missing_models_and_bad_ports_are_one_line(tmp_path: Path) -> None:
    with pytest.raises(ServingError, match=r"no such folder, and not a Hub repository id"):
        engine_command(tmp_path / "nowhere")
    with pytest.raises(ServingError, match=r"the Hub repository could not be fetched"):
        engine_command("RSIArena/no-such-model")  # HF_HUB_OFFLINE=1 in tests
    with pytest.raises(ServingError, match=r"--port 0: must be between 1 and 65535"):
        engine_command(tmp_path, port=0)
    with pytest.raises(ServingContractError, match=r"not a model folder"):
        engine_command(tmp_path)
