"""Validating a staged release before anything is pushed.

Checks, in order: the manifest against the files on disk (presence, size, sha256); every shard
named in the weights index present with the right hash and holding the tensors the index says;
`config.json` without `auto_map`; the serving contract (template in both places, k0, special
ids, stop ids); the training evidence the card relies on; the card's Hub metadata and the
licence. Then, if all of that holds, the folder is loaded the way users load it
(`transformers.pipeline`), the template is rendered with k0 through the loaded tokenizer, and a
real `generate` call is shown to stop on `<|im_end|>` (11) and on `</s>` (2).
"""

from __future__ import annotations

import json
import struct
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

from rsi_hub.chat import STOP_TOKEN_IDS, load_system_prompt, render
from rsi_hub.chat.serving import read_json_object, serving_contract_problems
from rsi_hub.errors import ReleaseError, ServingContractError
from rsi_hub.release.evidence import TRAINING_EVIDENCE_FILE, evidence_problems
from rsi_hub.release.facts import LICENSE_FILE, Facts
from rsi_hub.release.manifest import (
    MANIFEST_FILE,
    manifest_problems,
    read_manifest,
)
from rsi_hub.release.stage import (
    CONFIG_FILE,
    README_FILE,
    SAFETENSORS_INDEX,
    weight_files,
    weights_digest,
)
from rsi_hub.rundir import TrainingEvidence

RESTAGE = "stage the release again with `rsi-hub release RUN`"
PROBE_MESSAGES = [{"role": "user", "content": "Say hello in exactly two words."}]
# Steps of free generation before the probe forces a stop token.
STOP_PROBE_STEP = 2


def safetensors_tensor_names(path: Path) -> set[str]:
    """The tensor names in a safetensors file's header (read without loading any tensor)."""
    with open(path, "rb") as handle:
        (length,) = struct.unpack("<Q", handle.read(8))
        header = json.loads(handle.read(length))
    return {name for name in header if name != "__metadata__"}


def _weights_problems(folder: Path, manifest_sha: str) -> list[str]:
    try:
        # A symlinked shard is reported by the manifest check; hashing it would follow the link.
        files = [p for p in weight_files(folder) if not p.is_symlink()]
    except ReleaseError as err:
        return [f"{err} Then {RESTAGE}."]
    problems = []
    index_path = folder / SAFETENSORS_INDEX
    if index_path.is_file():
        weight_map: dict[str, str] = json.loads(index_path.read_text(encoding="utf-8"))[
            "weight_map"
        ]
        named = set(weight_map.values())
        for shard in sorted(named):
            if not (folder / shard).is_file():
                problems.append(
                    f"{folder / shard}: named in {SAFETENSORS_INDEX} but missing; {RESTAGE}."
                )
                continue
            names = safetensors_tensor_names(folder / shard)
            absent = [t for t, s in weight_map.items() if s == shard and t not in names]
            if absent:
                problems.append(
                    f"{folder / shard}: lacks {len(absent)} tensor(s) that {SAFETENSORS_INDEX} "
                    f"places there (e.g. {absent[0]}); re-save the checkpoint and {RESTAGE}."
                )
        problems += [
            f"{path}: not named in {SAFETENSORS_INDEX}; remove it from the run and {RESTAGE}."
            for path in files
            if path.name not in named
        ]
    actual = weights_digest(files)
    if actual != manifest_sha:
        problems.append(
            f"{folder / MANIFEST_FILE}: weights_sha256 is {manifest_sha[:12]}… but the staged "
            f"shards hash to {actual[:12]}…; {RESTAGE}."
        )
    return problems


def _config_problems(folder: Path) -> list[str]:
    try:
        config = read_json_object(folder / CONFIG_FILE, RESTAGE)
    except ServingContractError:
        return []  # unreadable: the serving contract check reports it, naming the file
    if "auto_map" in config:
        return [
            f"{folder / CONFIG_FILE}: has auto_map {config['auto_map']!r}, pointing at code this "
            f"release does not ship; {RESTAGE} (staging removes it)."
        ]
    return []


def card_metadata(readme: Path) -> dict[str, Any]:
    """The YAML front matter of a model card (empty when there is none)."""
    text = readme.read_text(encoding="utf-8")
    if not text.startswith("---\n"):
        return {}
    end = text.find("\n---\n", 4)
    if end < 0:
        return {}
    return yaml.safe_load(text[4:end]) or {}


def _card_problems(folder: Path, facts: Facts) -> list[str]:
    problems = []
    metadata = card_metadata(folder / README_FILE)
    for key, value in facts.hub_metadata.items():
        if metadata.get(key) != value:
            problems.append(
                f"{folder / README_FILE}: Hub metadata {key} is {metadata.get(key)!r}, the facts "
                f"say {value!r}; {RESTAGE}."
            )
    if (folder / LICENSE_FILE).read_text(encoding="utf-8") != facts.license_text:
        problems.append(
            f"{folder / LICENSE_FILE}: differs from {facts.folder / LICENSE_FILE}; {RESTAGE}."
        )
    return problems


class ForceTokenAt:
    """A logits processor that forces `token_id` at generation step `step` (0-based)."""

    def __init__(self, prompt_len: int, step: int, token_id: int) -> None:
        self.position = prompt_len + step
        self.token_id = token_id

    def __call__(self, input_ids: Any, scores: Any) -> Any:
        if input_ids.shape[1] == self.position:
            forced = scores.new_full(scores.shape, float("-inf"))
            forced[:, self.token_id] = 0.0
            return forced
        return scores


def _load_problems(folder: Path) -> list[str]:
    """Load the folder with `pipeline` and probe the template and the stop ids."""
    import torch
    from transformers import LogitsProcessorList, pipeline

    # On a GPU machine the 30B model loads across the GPUs; on a CPU it needs its ~60 GB in RAM.
    placement = {"device_map": "auto"} if torch.cuda.is_available() else {}
    try:
        chat = pipeline("text-generation", model=str(folder), dtype="auto", **placement)
    except Exception as err:  # any load failure is a release blocker, reported with its cause
        return [
            f"{folder}: transformers.pipeline cannot load it ({type(err).__name__}: {err}); fix "
            f"{CONFIG_FILE} or the weights and {RESTAGE}."
        ]
    problems = []
    prompt = chat.tokenizer.apply_chat_template(
        PROBE_MESSAGES, tokenize=False, add_generation_prompt=True
    )
    if prompt != render(PROBE_MESSAGES) or load_system_prompt() not in prompt:
        problems.append(
            f"{folder / 'tokenizer_config.json'}: the loaded tokenizer does not render the served "
            f"template with k0; {RESTAGE}."
        )
    ids = chat.tokenizer(prompt, add_special_tokens=False, return_tensors="pt").to(
        chat.model.device
    )
    prompt_len = ids["input_ids"].shape[1]
    for stop_id in STOP_TOKEN_IDS:
        force = LogitsProcessorList([ForceTokenAt(prompt_len, STOP_PROBE_STEP, stop_id)])
        with torch.no_grad():
            out = chat.model.generate(
                **ids, max_new_tokens=STOP_PROBE_STEP + 4, logits_processor=force
            )
        new = out[0, prompt_len:].tolist()
        if len(new) != STOP_PROBE_STEP + 1 or new[-1] != stop_id:
            problems.append(
                f"{folder / 'generation_config.json'}: generation did not stop on id {stop_id} "
                f"(produced {new}); it must list eos_token_id {list(STOP_TOKEN_IDS)}; {RESTAGE}."
            )
    return problems


def release_problems(folder: str | Path, facts: Facts, *, load_model: bool = True) -> list[str]:
    """Every problem of a staged release, one message each naming the file and the fix."""
    folder = Path(folder)
    if not folder.is_dir():
        return [f"{folder}: not a folder; {RESTAGE}."]
    manifest = read_manifest(folder)
    problems = manifest_problems(folder, manifest)
    required = (CONFIG_FILE, README_FILE, LICENSE_FILE, TRAINING_EVIDENCE_FILE)
    missing = [f"{folder / n}: missing; {RESTAGE}." for n in required if not (folder / n).is_file()]
    if missing:
        return problems + missing  # the checks below read these files
    problems += _weights_problems(folder, manifest.weights_sha256)
    problems += _config_problems(folder)
    problems += serving_contract_problems(folder)
    problems += evidence_problems(
        TrainingEvidence.read(folder), facts, folder / TRAINING_EVIDENCE_FILE
    )
    problems += _card_problems(folder, facts)
    if load_model and not problems:
        problems += _load_problems(folder)
    return problems


def validate_release(
    folder: str | Path,
    facts: Facts,
    *,
    load_model: bool = True,
    log: Callable[[str], None] = print,
) -> None:
    """Check a staged release; nothing may be pushed unless this returns.

    Args:
        folder: the staged release.
        facts: the release's facts (what the evidence and card must state).
        load_model: also load the folder with `transformers.pipeline` and probe generation.
        log: receives a line when the checks pass.

    Raises:
        ReleaseError: listing every problem, each naming the file and the fix.
    """
    problems = release_problems(folder, facts, load_model=load_model)
    if problems:
        raise ReleaseError(
            f"{folder} is not fit to release (nothing was pushed):\n  - " + "\n  - ".join(problems)
        )
    checks = "files, hashes, config, serving contract, evidence, card"
    log(
        f"validated {folder}: {checks}"
        + (", pipeline load, stops on 11 and 2" if load_model else "")
    )
