"""Writing and validating the serving files of a model folder (a run directory or a release)."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from rsi_hub.chat.template import (
    CHAT_TEMPLATE_FILE,
    SERVING_CONFIG_FILE,
    SYSTEM_PROMPT_FILE,
    load_chat_template,
    load_serving_config,
    load_system_prompt,
)
from rsi_hub.chat.tokens import (
    BOS_TOKEN,
    IM_END_TOKEN,
    MAX_INPUT_TOKENS,
    MAX_NEW_TOKENS,
    PAD_TOKEN,
    SPECIAL_TOKEN_IDS,
    STOP_TOKEN_IDS,
    UNK_TOKEN,
)
from rsi_hub.errors import ServingContractError
from rsi_hub.hashing import WEIGHTS_GLOB, weight_shards
from rsi_hub.rundir.jsonfile import write_json_atomic, write_text_atomic

TOKENIZER_CONFIG_FILE = "tokenizer_config.json"
TOKENIZER_FILE = "tokenizer.json"
GENERATION_CONFIG_FILE = "generation_config.json"
MODEL_CONFIG_FILE = "config.json"
FIX_HINT = "run `rsi-hub validate {folder} --fix` to rewrite the serving files"


def _read_text(path: Path, fix: str) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError as err:
        raise ServingContractError(
            f"{path}: not UTF-8 text (byte {err.start}: {err.reason}); {fix}."
        ) from err


def read_json_object(path: Path, fix: str) -> dict[str, Any]:
    """The JSON object in `path`; anything else is a `ServingContractError` naming file and fix."""
    text = _read_text(path, fix)
    try:
        data = json.loads(text)
    except json.JSONDecodeError as err:
        raise ServingContractError(
            f"{path}: not valid JSON ({err.msg}: line {err.lineno} column {err.colno}); {fix}."
        ) from err
    if not isinstance(data, dict):
        kind = "null" if data is None else type(data).__name__
        raise ServingContractError(
            f"{path}: holds a JSON {kind}, must be an object of fields; {fix}."
        )
    return data


def _tokenizer_fix(folder: Path) -> str:
    return f"save the tokenizer into {folder} again (tokenizer.save_pretrained)"


def write_serving_files(folder: str | Path) -> None:
    """Write the serving contract into a model folder that already holds a saved tokenizer.

    Writes `chat_template.jinja`, `system_prompt.txt` and `serving_config.json`; puts the same
    template string under `chat_template` in `tokenizer_config.json` with `eos_token`
    `<|im_end|>`; and sets `generation_config.json` to stop on ids 11 and 2 with greedy decoding
    and at most 2,048 new tokens.

    Raises:
        ServingContractError: the folder has no `tokenizer_config.json` (save the tokenizer first).
    """
    folder = Path(folder)
    tokenizer_config_path = folder / TOKENIZER_CONFIG_FILE
    if not tokenizer_config_path.is_file():
        raise ServingContractError(
            f"{tokenizer_config_path} is missing: save the tokenizer into {folder} "
            "(tokenizer.save_pretrained) before writing the serving files."
        )
    template = load_chat_template()
    write_text_atomic(folder / CHAT_TEMPLATE_FILE, template)
    write_text_atomic(folder / SYSTEM_PROMPT_FILE, load_system_prompt())
    write_json_atomic(folder / SERVING_CONFIG_FILE, load_serving_config())

    tokenizer_config = read_json_object(tokenizer_config_path, _tokenizer_fix(folder))
    tokenizer_config.update(
        {
            "chat_template": template,
            "eos_token": IM_END_TOKEN,
            "bos_token": BOS_TOKEN,
            "unk_token": UNK_TOKEN,
            "pad_token": PAD_TOKEN,
            "model_max_length": MAX_INPUT_TOKENS,
        }
    )
    write_json_atomic(tokenizer_config_path, tokenizer_config)

    generation_path = folder / GENERATION_CONFIG_FILE
    generation: dict[str, Any] = {}
    # An unreadable file is replaced: every field the contract needs is written below.
    with contextlib.suppress(ServingContractError):
        if generation_path.is_file():
            generation = read_json_object(generation_path, "")
    # Sampling knobs would only trigger "do_sample is False" warnings; greedy is the contract.
    for key in ("temperature", "top_p", "top_k", "_from_model_config"):
        generation.pop(key, None)
    generation.update(
        {
            "bos_token_id": SPECIAL_TOKEN_IDS[BOS_TOKEN],
            "eos_token_id": list(STOP_TOKEN_IDS),
            "pad_token_id": SPECIAL_TOKEN_IDS[PAD_TOKEN],
            "do_sample": False,
            "max_new_tokens": MAX_NEW_TOKENS,
        }
    )
    write_json_atomic(generation_path, generation)


def _tokenizer_ids(tokenizer_json: dict[str, Any]) -> dict[str, int]:
    added = tokenizer_json.get("added_tokens", [])
    entries = added if isinstance(added, list) else []
    ids = {e.get("content"): e.get("id") for e in entries if isinstance(e, dict)}
    model = tokenizer_json.get("model")
    vocab = model.get("vocab", {}) if isinstance(model, dict) else {}
    if isinstance(vocab, dict):
        for token in SPECIAL_TOKEN_IDS:
            ids.setdefault(token, vocab.get(token))
    return ids


def _text_problems(path: Path, expected: str, what: str, fix: str) -> list[str]:
    if not path.is_file():
        return [f"{path}: missing; {fix}."]
    if _read_text(path, fix) != expected:
        return [f"{path}: {what}; {fix}."]
    return []


def _config_problems(folder: Path) -> list[str]:
    path = folder / MODEL_CONFIG_FILE
    fix = f"save the model's config into {folder} again (model.config.save_pretrained)"
    if not path.is_file():
        return [f"{path}: missing; {fix}."]
    model_type = read_json_object(path, fix).get("model_type")
    if not isinstance(model_type, str) or not model_type:
        return [f"{path}: field model_type is {model_type!r}, must name the architecture; {fix}."]
    return []


def _tokenizer_config_problems(folder: Path, template: str, fix: str) -> list[str]:
    path = folder / TOKENIZER_CONFIG_FILE
    if not path.is_file():
        return [f"{path}: missing; {_tokenizer_fix(folder)}."]
    tokenizer_config = read_json_object(path, _tokenizer_fix(folder))
    problems = []
    if tokenizer_config.get("chat_template") != template:
        problems.append(
            f"{path}: field chat_template is not byte-identical to "
            f"{CHAT_TEMPLATE_FILE} (other tools read only this copy); {fix}."
        )
    if tokenizer_config.get("eos_token") != IM_END_TOKEN:
        problems.append(
            f"{path}: field eos_token is {tokenizer_config.get('eos_token')!r}, "
            f"must be {IM_END_TOKEN!r}; {fix}."
        )
    return problems


def _tokenizer_problems(folder: Path) -> list[str]:
    path = folder / TOKENIZER_FILE
    if not path.is_file():
        return [f"{path}: missing; save a fast tokenizer into {folder}."]
    ids = _tokenizer_ids(read_json_object(path, _tokenizer_fix(folder)))
    return [
        f"{path}: token {token} has id {ids.get(token)}, must be {expected}; "
        "this tokenizer does not match the base model's: use the base model's "
        "tokenizer (or rebuild the tiny one with `rsi-hub tiny`)."
        for token, expected in SPECIAL_TOKEN_IDS.items()
        if ids.get(token) != expected
    ]


def _generation_problems(folder: Path, fix: str) -> list[str]:
    path = folder / GENERATION_CONFIG_FILE
    if not path.is_file():
        return [f"{path}: missing; {fix}."]
    generation = read_json_object(path, fix)
    eos = generation.get("eos_token_id")
    eos_ids = eos if isinstance(eos, list) else [eos]
    problems = []
    if any(i not in eos_ids for i in STOP_TOKEN_IDS):
        problems.append(
            f"{path}: field eos_token_id is {eos!r}, must hold both stop ids "
            f"{list(STOP_TOKEN_IDS)} (<|im_end|> and </s>); {fix}."
        )
    if generation.get("do_sample") is not False:
        problems.append(f"{path}: field do_sample must be false (greedy); {fix}.")
    return problems


def serving_contract_problems(folder: str | Path) -> list[str]:
    """Every way `folder` breaks the serving contract, one message each (file, field, fix).

    A file that cannot be read (not UTF-8, not JSON, not a JSON object) is one problem naming
    the file and the fix; the other files are still checked.
    """
    folder = Path(folder)
    fix = FIX_HINT.format(folder=folder)
    template = load_chat_template()
    checks: list[Callable[[], list[str]]] = [
        lambda: _config_problems(folder),
        lambda: _text_problems(
            folder / CHAT_TEMPLATE_FILE, template, "differs from the served template", fix
        ),
        lambda: _text_problems(
            folder / SYSTEM_PROMPT_FILE, load_system_prompt(), "is not k0 byte for byte", fix
        ),
        lambda: _serving_config_problems(folder, fix),
        lambda: _tokenizer_config_problems(folder, template, fix),
        lambda: _tokenizer_problems(folder),
        lambda: _generation_problems(folder, fix),
    ]
    problems: list[str] = []
    for check in checks:
        try:
            problems += check()
        except ServingContractError as err:  # an unreadable file: its message names file and fix
            problems.append(str(err))
    return problems


def _serving_config_problems(folder: Path, fix: str) -> list[str]:
    path = folder / SERVING_CONFIG_FILE
    if not path.is_file():
        return [f"{path}: missing; {fix}."]
    if read_json_object(path, fix) != load_serving_config():
        return [f"{path}: differs from the card's serving settings; {fix}."]
    return []


def not_a_model_folder(folder: str | Path) -> str | None:
    """Why `folder` is not a model folder (no `config.json`, no weights), or None when it is one."""
    folder = Path(folder)
    if not folder.is_dir():
        return f"{folder}: not a folder; pass a run directory."
    lacks = [MODEL_CONFIG_FILE] if not (folder / MODEL_CONFIG_FILE).is_file() else []
    if not weight_shards(folder):
        lacks.append("weights" if lacks else f"weights ({WEIGHTS_GLOB})")
    if not lacks:
        return None
    return (
        f"{folder}: not a model folder (no {' / '.join(lacks)}); pass a run directory (what "
        "`rsi-hub train` or `rsi-hub tiny` writes) or a staged release."
    )


def validate_model_folder(folder: str | Path) -> None:
    """Check that a model folder honours the serving contract of card section 1.

    Checks that it is a model folder at all (`config.json` with a `model_type`, weights), then
    the template files (both copies byte-identical to the served template), k0, the serving
    settings, the special-token ids of the tokenizer, `eos_token`, and both stop ids in
    `generation_config.json`. Release and eval call this before they trust a folder.

    Raises:
        ServingContractError: not a model folder (one line), or listing every problem found,
            each naming the file, the field and the fix.
    """
    folder = Path(folder)
    reason = not_a_model_folder(folder)
    if reason is not None:
        raise ServingContractError(reason)
    problems = serving_contract_problems(folder)
    if problems:
        listed = "\n  - ".join(problems)
        raise ServingContractError(f"{folder} breaks the serving contract:\n  - {listed}")
