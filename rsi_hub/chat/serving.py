"""Writing and validating the serving files of a model folder (a run directory or a release)."""

from __future__ import annotations

import json
import os
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

TOKENIZER_CONFIG_FILE = "tokenizer_config.json"
TOKENIZER_FILE = "tokenizer.json"
GENERATION_CONFIG_FILE = "generation_config.json"
FIX_HINT = "run `rsi-hub validate {folder} --fix` to rewrite the serving files"


def _write_text_atomic(path: Path, text: str) -> None:
    # Write beside the target and rename, so a crash never leaves a half-written file.
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def _write_json(path: Path, data: dict[str, Any]) -> None:
    _write_text_atomic(path, json.dumps(data, indent=2, ensure_ascii=False) + "\n")


def _read_json(path: Path) -> dict[str, Any]:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as err:
        raise ServingContractError(f"{path}: not valid JSON ({err}).") from err


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
    _write_text_atomic(folder / CHAT_TEMPLATE_FILE, template)
    _write_text_atomic(folder / SYSTEM_PROMPT_FILE, load_system_prompt())
    _write_json(folder / SERVING_CONFIG_FILE, load_serving_config())

    tokenizer_config = _read_json(tokenizer_config_path)
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
    _write_json(tokenizer_config_path, tokenizer_config)

    generation_path = folder / GENERATION_CONFIG_FILE
    generation = _read_json(generation_path) if generation_path.is_file() else {}
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
    _write_json(generation_path, generation)


def _tokenizer_ids(tokenizer_json: dict[str, Any]) -> dict[str, int]:
    ids = {entry["content"]: entry["id"] for entry in tokenizer_json.get("added_tokens", [])}
    vocab = tokenizer_json.get("model", {}).get("vocab", {})
    if isinstance(vocab, dict):
        for token in SPECIAL_TOKEN_IDS:
            ids.setdefault(token, vocab.get(token))
    return ids


def serving_contract_problems(folder: str | Path) -> list[str]:
    """Every way `folder` breaks the serving contract, one message each (file, field, fix)."""
    folder = Path(folder)
    fix = FIX_HINT.format(folder=folder)
    problems: list[str] = []
    template = load_chat_template()

    template_path = folder / CHAT_TEMPLATE_FILE
    if not template_path.is_file():
        problems.append(f"{template_path}: missing; {fix}.")
    elif template_path.read_text(encoding="utf-8") != template:
        problems.append(f"{template_path}: differs from the served template; {fix}.")

    prompt_path = folder / SYSTEM_PROMPT_FILE
    if not prompt_path.is_file():
        problems.append(f"{prompt_path}: missing; {fix}.")
    elif prompt_path.read_text(encoding="utf-8") != load_system_prompt():
        problems.append(f"{prompt_path}: is not k0 byte for byte; {fix}.")

    serving_path = folder / SERVING_CONFIG_FILE
    if not serving_path.is_file():
        problems.append(f"{serving_path}: missing; {fix}.")
    elif _read_json(serving_path) != load_serving_config():
        problems.append(f"{serving_path}: differs from the card's serving settings; {fix}.")

    config_path = folder / TOKENIZER_CONFIG_FILE
    if not config_path.is_file():
        problems.append(f"{config_path}: missing; save the tokenizer into {folder}.")
    else:
        tokenizer_config = _read_json(config_path)
        if tokenizer_config.get("chat_template") != template:
            problems.append(
                f"{config_path}: field chat_template is not byte-identical to "
                f"{CHAT_TEMPLATE_FILE} (other tools read only this copy); {fix}."
            )
        if tokenizer_config.get("eos_token") != IM_END_TOKEN:
            problems.append(
                f"{config_path}: field eos_token is {tokenizer_config.get('eos_token')!r}, "
                f"must be {IM_END_TOKEN!r}; {fix}."
            )

    tokenizer_path = folder / TOKENIZER_FILE
    if not tokenizer_path.is_file():
        problems.append(f"{tokenizer_path}: missing; save a fast tokenizer into {folder}.")
    else:
        ids = _tokenizer_ids(_read_json(tokenizer_path))
        for token, expected in SPECIAL_TOKEN_IDS.items():
            if ids.get(token) != expected:
                problems.append(
                    f"{tokenizer_path}: token {token} has id {ids.get(token)}, must be {expected}; "
                    "this tokenizer does not match the base model's: use the base model's "
                    "tokenizer (or rebuild the tiny one with `rsi-hub tiny`)."
                )

    generation_path = folder / GENERATION_CONFIG_FILE
    if not generation_path.is_file():
        problems.append(f"{generation_path}: missing; {fix}.")
    else:
        generation = _read_json(generation_path)
        eos = generation.get("eos_token_id")
        eos_ids = eos if isinstance(eos, list) else [eos]
        missing = [i for i in STOP_TOKEN_IDS if i not in eos_ids]
        if missing:
            problems.append(
                f"{generation_path}: field eos_token_id is {eos!r}, must hold both stop ids "
                f"{list(STOP_TOKEN_IDS)} (<|im_end|> and </s>); {fix}."
            )
        if generation.get("do_sample") is not False:
            problems.append(f"{generation_path}: field do_sample must be false (greedy); {fix}.")
    return problems


def validate_model_folder(folder: str | Path) -> None:
    """Check that a model folder honours the serving contract of card section 1.

    Checks the template files (both copies byte-identical to the served template), k0, the
    serving settings, the special-token ids of the tokenizer, `eos_token`, and both stop ids in
    `generation_config.json`. Release and eval call this before they trust a folder.

    Raises:
        ServingContractError: listing every problem found, each naming the file, the field and
            the fix.
    """
    folder = Path(folder)
    if not folder.is_dir():
        raise ServingContractError(f"{folder}: not a folder; pass a run directory.")
    problems = serving_contract_problems(folder)
    if problems:
        listed = "\n  - ".join(problems)
        raise ServingContractError(f"{folder} breaks the serving contract:\n  - {listed}")
