"""`rsi-hub serve`: the exact engine command that serves a run in the card's served configuration.

What each engine is told, and how (card section 1):

| setting | transformers serve (5.x) | vllm serve |
|---|---|---|
| chat template | the folder's `tokenizer_config.json` (the tokenizer loads it) | `--chat-template FOLDER/chat_template.jinja` |
| k0 by default, thinking off | `--chat-template-kwargs` | `--default-chat-template-kwargs` |
| stops at ids 11 and 2 | `generation_config.json` `eos_token_id` (model.generate) | `--generation-config auto` (eos ids become stop ids) |
| greedy | `generation_config.json` `do_sample: false` | `--override-generation-config {"temperature": 0.0}` (vLLM ignores `do_sample`) |
| answer limit 2,048 | `generation_config.json` `max_new_tokens` | the same file's `max_new_tokens` (vLLM's default `max_tokens`) |
| max input 8,192 | not enforced by the engine: see `rsi_hub.serving.transformers_engine` | `--max-model-len 8192` |

A request's `chat_template_kwargs` override the server's defaults on both engines: the card's
IF263 protocol sends `{"use_default_system_prompt": false}`.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import sys
from dataclasses import dataclass
from importlib.util import find_spec
from pathlib import Path
from typing import NoReturn

from rsi_hub.chat import MAX_INPUT_TOKENS, validate_model_folder
from rsi_hub.chat.template import CHAT_TEMPLATE_FILE
from rsi_hub.errors import EngineNotInstalledError, ServingError

ENGINES: tuple[str, ...] = ("transformers", "vllm")
DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8000
#: The served template keywords: k0 when a conversation has no system message, no `<think>`.
SERVED_TEMPLATE_KWARGS: dict[str, bool] = {
    "enable_thinking": False,
    "use_default_system_prompt": True,
}
#: vLLM takes sampling defaults from generation_config.json but ignores its `do_sample`.
VLLM_GREEDY_OVERRIDE: dict[str, float] = {"temperature": 0.0}
TRANSFORMERS_ENGINE_MODULE = "rsi_hub.serving.transformers_engine"
REPO_ID = re.compile(r"[A-Za-z0-9][\w.-]*/[\w.-]+")


@dataclass(frozen=True)
class EngineCommand:
    """One engine launch: the command line and what a client needs to talk to it.

    Attributes:
        engine: `transformers` or `vllm`.
        argv: the command line, program first.
        model_id: the `model` every request must name (the server is pinned to it).
        base_url: the OpenAI-compatible base URL (`http://HOST:PORT/v1`).
    """

    engine: str
    argv: tuple[str, ...]
    model_id: str
    base_url: str

    def shell(self) -> str:
        """The command as one shell-quoted line, ready to copy."""
        return shlex.join(self.argv)


def resolve_model(run_or_repo: str | Path) -> tuple[str, Path]:
    """(model id clients send, local folder to validate) for a run directory or a Hub repo id.

    A local folder is served under its absolute path; a Hub repository under its id, validated on
    the snapshot huggingface_hub downloads (the engine then reads the same cache).

    Raises:
        ServingError: neither an existing folder nor a repository that can be fetched.
    """
    path = Path(run_or_repo).expanduser()
    if path.exists():
        return str(path.resolve()), path.resolve()
    text = str(run_or_repo)
    if not REPO_ID.fullmatch(text):
        raise ServingError(
            f"{text}: no such folder, and not a Hub repository id (owner/name); pass a run "
            "directory (what `rsi-hub train` or `rsi-hub tiny` writes) or a repository id.",
            path=text,
        )
    from huggingface_hub import snapshot_download

    try:
        folder = snapshot_download(text)
    except Exception as err:  # offline, not found, gated: one line naming the repository
        from rsi_hub.hubnet import failure_reason

        raise ServingError(
            f"{text}: not a local folder, and the Hub repository could not be fetched "
            f"({failure_reason(err)}); check the id, your network and `hf auth login`.",
            path=text,
        ) from err
    return text, Path(folder)


def _transformers_argv(model_id: str, host: str, port: int) -> list[str]:
    # `python -m rsi_hub.serving.transformers_engine` is `transformers serve` with the same
    # arguments plus the 8,192-token input limit the engine lacks (see that module).
    return [
        sys.executable,
        "-m",
        TRANSFORMERS_ENGINE_MODULE,
        "serve",
        model_id,
        "--host",
        host,
        "--port",
        str(port),
        "--dtype",
        "auto",
        "--chat-template-kwargs",
        json.dumps(SERVED_TEMPLATE_KWARGS),
    ]


def _vllm_argv(model_id: str, folder: Path, host: str, port: int) -> list[str]:
    return [
        "vllm",
        "serve",
        model_id,
        "--host",
        host,
        "--port",
        str(port),
        "--dtype",
        "auto",
        "--max-model-len",
        str(MAX_INPUT_TOKENS),
        "--chat-template",
        str(folder / CHAT_TEMPLATE_FILE),
        "--default-chat-template-kwargs",
        json.dumps(SERVED_TEMPLATE_KWARGS),
        "--generation-config",
        "auto",
        "--override-generation-config",
        json.dumps(VLLM_GREEDY_OVERRIDE),
    ]


def engine_command(
    run_or_repo: str | Path,
    *,
    engine: str = "transformers",
    host: str = DEFAULT_HOST,
    port: int = DEFAULT_PORT,
) -> EngineCommand:
    """The command that serves `run_or_repo` with `engine` in the served configuration.

    Args:
        run_or_repo: a run directory, a staged release, or a Hub repository id.
        engine: `transformers` (CPU or GPU) or `vllm` (GPU).
        host: the address to listen on (loopback by default).
        port: the port to listen on.

    Raises:
        ServingContractError: the folder fails `rsi-hub validate` (every problem listed).
        ServingError: unknown engine, bad port, or a model that cannot be found.
    """
    if engine not in ENGINES:
        raise ServingError(
            f"--engine {engine!r}: choose one of {', '.join(ENGINES)}.", field="engine"
        )
    if not 0 < port < 65536:
        raise ServingError(f"--port {port}: must be between 1 and 65535.", field="port")
    model_id, folder = resolve_model(run_or_repo)
    validate_model_folder(folder)
    if engine == "transformers":
        argv = _transformers_argv(model_id, host, port)
    else:
        argv = _vllm_argv(model_id, folder, host, port)
    shown_host = f"[{host}]" if ":" in host else host
    return EngineCommand(engine, tuple(argv), model_id, f"http://{shown_host}:{port}/v1")


def check_engine_installed(engine: str) -> None:
    """Raise `EngineNotInstalledError` (one line naming the fix) when `engine` is missing."""
    if engine == "vllm":
        if shutil.which("vllm") is None or find_spec("vllm") is None:
            raise EngineNotInstalledError(
                "--engine vllm: vLLM is not installed here (it needs a CUDA GPU); on a GPU "
                "machine run `pip install vllm`, or serve on this machine with "
                "--engine transformers.",
                field="engine",
            )
        return
    from transformers.utils.import_utils import is_serve_available

    if not is_serve_available():
        raise EngineNotInstalledError(
            "--engine transformers: `transformers serve` needs fastapi, uvicorn, pydantic and "
            "openai; install them with `pip install 'rsi-hub[serve]'`.",
            field="engine",
        )


def exec_engine(command: EngineCommand) -> NoReturn:
    """Replace this process with the engine (its signals and exit code become the server's).

    Raises:
        EngineNotInstalledError: the engine is not installed (before anything is started).
    """
    check_engine_installed(command.engine)
    sys.stdout.flush()
    sys.stderr.flush()
    os.execvp(command.argv[0], list(command.argv))
