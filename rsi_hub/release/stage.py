"""Staging a release: a run directory becomes a folder laid out as its Hub repository.

The weights are hard-linked (no copy, no extra disk) when the output is on the same file system
as the run, and copied otherwise. Everything is built in a hidden sibling folder and renamed
into place at the end, so an interrupted staging never leaves a half-made release behind.
"""

from __future__ import annotations

import dataclasses
import errno
import hashlib
import json
import os
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from rsi_hub.chat import validate_model_folder
from rsi_hub.errors import ReleaseError
from rsi_hub.hashing import BLOCK_SIZE, WEIGHTS_GLOB, manifest_sha256, weight_shards
from rsi_hub.release.card import render_card
from rsi_hub.release.eval_results import SuiteResult, read_eval_results
from rsi_hub.release.evidence import TRAINING_EVIDENCE_FILE, evidence_problems, read_evidence
from rsi_hub.release.facts import LICENSE_FILE, Facts, load_facts
from rsi_hub.release.manifest import (
    MANIFEST_FILE,
    Manifest,
    build_manifest,
    cached_sha256,
    remember_sha256,
)

CONFIG_FILE = "config.json"
SAFETENSORS_INDEX = "model.safetensors.index.json"
README_FILE = "README.md"
# Small files shipped as they are in the run (those that exist); the serving files among them
# were checked against the contract before anything is staged.
RUN_FILES = (
    "tokenizer.json",
    "tokenizer_config.json",
    "special_tokens_map.json",
    "added_tokens.json",
    "tokenizer.model",
    "chat_template.jinja",
    "system_prompt.txt",
    "serving_config.json",
    "generation_config.json",
    TRAINING_EVIDENCE_FILE,
)
Log = Callable[[str], None]


@dataclass(frozen=True)
class StagedRelease:
    """A staged release folder and what went into it."""

    folder: Path
    facts: Facts
    manifest: Manifest
    link_mode: str  # "hardlink", "copy" or "copy+hardlink" (some of each)
    results: dict[str, SuiteResult]
    notes: list[str]


def weight_files(folder: Path) -> list[Path]:
    """The weight shards of a model folder, in name order (those `weights_sha256` covers).

    Raises:
        ReleaseError: there are none.
    """
    files = weight_shards(folder)
    if not files:
        raise ReleaseError(
            f"{folder}: no {WEIGHTS_GLOB} file; save the model with save_pretrained (safetensors)."
        )
    return files


def weights_digest(files: list[Path]) -> str:
    """The weights sha256 of shards (hashed in parallel, once per process)."""
    digests = cached_sha256(files)
    return manifest_sha256({p.name: digests[p] for p in files})


def copy_hashing(src: Path, dst: Path) -> str:
    """Copy `src` to `dst` and return the sha256 of the bytes written, in one read of `src`."""
    digest = hashlib.sha256()
    buffer = bytearray(BLOCK_SIZE)
    view = memoryview(buffer)
    with open(src, "rb", buffering=0) as source, open(dst, "wb", buffering=0) as target:
        while read := source.readinto(buffer):
            digest.update(view[:read])
            target.write(view[:read])
    return digest.hexdigest()


def link_or_copy(src: Path, dst: Path, sha256: str) -> str:
    """Hard-link `src` to `dst`, or copy it when the file system cannot; return which was done.

    A copy is hashed as it is written and must match `sha256` (the source's digest when it was
    hashed for the release), so a file changed mid-staging is caught and a copy is never hashed
    twice.

    Raises:
        ReleaseError: the copied bytes do not match `sha256`.
    """
    try:
        os.link(src, dst)
        return "hardlink"
    except OSError as err:
        # Another file system (EXDEV), or one without hard links (EPERM on some mounts, ENOTSUP).
        if err.errno not in (errno.EXDEV, errno.EPERM, errno.ENOTSUP, errno.EMLINK, errno.EACCES):
            raise
    written = copy_hashing(src, dst)
    if written != sha256:
        raise ReleaseError(f"{src}: changed while it was being staged; stage the release again.")
    remember_sha256(dst, written)
    return "copy"


def strip_auto_map(config: dict) -> tuple[dict, bool]:
    """`config` without `auto_map`: a release ships no modelling code, and nemotron_h is native to
    transformers, so an `auto_map` could only send users to remote code that is not there."""
    if "auto_map" not in config:
        return config, False
    return {k: v for k, v in config.items() if k != "auto_map"}, True


def default_out(run: Path, name: str) -> Path:
    """Where a release is staged by default: beside the run (same file system, so hard links)."""
    return run.parent / f"release-{name}"


def _prepare_out(out: Path, run: Path, force: bool) -> None:
    if out.resolve() == run.resolve() or run.resolve() in out.resolve().parents:
        raise ReleaseError(f"{out}: inside the run directory {run}; choose an --out outside it.")
    if out.exists() and any(out.iterdir()) and not ((out / MANIFEST_FILE).is_file() or force):
        raise ReleaseError(
            f"{out}: not empty and not a staged release; choose another --out or pass --force "
            "to replace it."
        )


def _check_run(run: Path, facts: Facts) -> None:
    if not run.is_dir():
        raise ReleaseError(f"{run}: not a folder; pass a run directory (runs/NAME).")
    missing = [
        n
        for n in (CONFIG_FILE, "tokenizer.json", TRAINING_EVIDENCE_FILE)
        if not (run / n).is_file()
    ]
    if missing:
        raise ReleaseError(
            f"{run}: missing {', '.join(missing)}; release a complete run directory "
            "(what `rsi-hub train` or `rsi-hub tiny` writes)."
        )
    validate_model_folder(run)
    problems = evidence_problems(read_evidence(run), facts, run / TRAINING_EVIDENCE_FILE)
    if problems:
        raise ReleaseError(
            "the run's training evidence is incomplete:\n  - " + "\n  - ".join(problems)
        )


def _place_weights(run: Path, building: Path, digests: dict[Path, str]) -> str:
    """Link (or copy) the shards and copy their index; return the link mode."""
    modes = {link_or_copy(src, building / src.name, digest) for src, digest in digests.items()}
    if (run / SAFETENSORS_INDEX).is_file():
        shutil.copyfile(run / SAFETENSORS_INDEX, building / SAFETENSORS_INDEX)
    return "+".join(sorted(modes))


def _write_files(run: Path, building: Path, facts: Facts) -> list[str]:
    """`config.json` (without auto_map), the run's small files and the licence; return notes."""
    notes = []
    config, stripped = strip_auto_map(json.loads((run / CONFIG_FILE).read_text(encoding="utf-8")))
    if stripped:
        notes.append(
            f"{CONFIG_FILE}: removed auto_map (it points at code this release does not ship)"
        )
    (building / CONFIG_FILE).write_text(json.dumps(config, indent=2) + "\n", encoding="utf-8")
    for file_name in RUN_FILES:
        if (run / file_name).is_file():
            shutil.copyfile(run / file_name, building / file_name)
    (building / LICENSE_FILE).write_text(facts.license_text, encoding="utf-8")
    return notes


def _make_readable(folder: Path) -> None:
    """Mode 0644 for every staged file: transformers saves weights 0600 (through a temporary
    file), which other users of a shared machine, and servers run as another user, cannot read.
    A hard-linked shard shares its mode with the run's file, which gets 0644 too."""
    for path in folder.rglob("*"):
        if path.is_file():
            os.chmod(path, 0o644)


def stage_release(
    run: str | Path,
    *,
    name: str | None = None,
    out: str | Path | None = None,
    repo_id: str | None = None,
    force: bool = False,
    facts_root: str | Path | None = None,
    log: Log = print,
) -> StagedRelease:
    """Stage `run` as a Hub repository folder, ready to validate and push.

    The folder holds the weights and their index (hard-linked when possible), `config.json`
    without `auto_map`, the tokenizer and serving files, `training_evidence.json`, `LICENSE`,
    `README.md` (the card, with the run's own evaluation results) and `release_manifest.json`.

    Args:
        run: the run directory.
        name: the facts folder `release/<name>/` (default: the run's folder name).
        out: the staging folder (default: `release-<name>` beside the run). A previous staging
            there is replaced; any other non-empty folder is refused unless `force`.
        repo_id: the Hub repository (default: the facts' `repo_id`).
        force: replace a non-empty `out` that is not a staged release.
        facts_root: the folder holding the facts folders (default: the repository's `release/`).
        log: receives one line per step.

    Raises:
        ReleaseError: a broken input (serving contract, evidence, eval results bound to other
            weights, facts); the message names the file and the fix. Nothing is written then.
    """
    run = Path(run)
    name = name or run.name
    facts = load_facts(name, facts_root)
    if repo_id:
        facts = dataclasses.replace(facts, repo_id=repo_id)
    _check_run(run, facts)
    out = Path(out) if out is not None else default_out(run, name)
    _prepare_out(out, run, force)

    weights = weight_files(run)
    log(f"hashing {len(weights)} weight file(s) of {run}")
    digests = cached_sha256(weights)
    weights_sha = manifest_sha256({p.name: digests[p] for p in weights})
    results = read_eval_results(run, weights_sha)
    log(f"weights sha256 {weights_sha}; evaluation results: {', '.join(results) or 'none'}")

    building = out.with_name(f".{out.name}.staging")
    if building.exists():
        shutil.rmtree(building)  # left by an interrupted staging
    building.mkdir(parents=True)
    try:
        link_mode = _place_weights(run, building, {p: digests[p] for p in weights})
        notes = _write_files(run, building, facts)
        card = render_card(facts, results=results, weights_sha256=weights_sha)
        (building / README_FILE).write_text(card.text, encoding="utf-8")
        notes.extend(card.notes)
        manifest = build_manifest(
            building, name=name, repo_id=facts.repo_id, weights_sha256=weights_sha
        )
        manifest.write(building)
        _make_readable(building)
    except BaseException:
        shutil.rmtree(building, ignore_errors=True)  # never leave a half-made release
        raise
    if out.exists():
        shutil.rmtree(out)
    building.rename(out)
    log(
        f"staged {len(manifest.files) + 1} files ({manifest.total_bytes:,} bytes) in {out}; weights: {link_mode}"
    )
    for note in notes:
        log(f"note: {note}")
    return StagedRelease(out, facts, manifest, link_mode, results, notes)
