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
from rsi_hub.release.evidence import TRAINING_EVIDENCE_FILE, evidence_problems
from rsi_hub.release.facts import LICENSE_FILE, Facts, check_repo_id, load_facts
from rsi_hub.release.manifest import (
    MANIFEST_FILE,
    Manifest,
    build_manifest,
    cached_sha256,
    folder_entries,
    read_manifest,
    remember_sha256,
)
from rsi_hub.rundir import (
    DOSE_RESPONSE_FILE,
    REPLICATION_REPORT_FILE,
    ReplicationReport,
    TrainingEvidence,
)
from rsi_hub.staging import fresh_staging_dir, swap_in

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
    REPLICATION_REPORT_FILE,  # a replication's winner: its rounds, verdicts, power
    DOSE_RESPONSE_FILE,
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
        os.link(src, dst)  # `src` is a real file, never a symlink (see `run_sources`)
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


def run_file(run: Path, path: Path) -> Path:
    """The real file staging reads for `path` of `run`: itself, or the file its symlink names.

    Nothing a release ships may come from outside its run: a link such as
    `tokenizer.model -> ~/secret` would be staged and pushed with the target's contents.

    Raises:
        ReleaseError: `path` is a symlink whose target lies outside the run.
    """
    if not path.is_symlink():
        return path
    target = path.resolve()
    if not target.is_relative_to(run.resolve()):
        raise ReleaseError(
            f"{path}: a symlink to {target}, outside the run {run}; a release ships only the "
            "run's own files: replace the link with a copy of the file if it belongs to the "
            "model, or remove it."
        )
    return target


def run_sources(run: Path) -> dict[str, Path]:
    """Every file staging ships from `run`, by its name in the release -> the real file to read.

    Symlinks inside the run are resolved here, once, so that hashing, hard-linking and copying
    never follow a link (which could be retargeted in between).

    Raises:
        ReleaseError: a symlink leaves the run (see `run_file`).
    """
    names = [CONFIG_FILE, SAFETENSORS_INDEX, *RUN_FILES, *(p.name for p in weight_shards(run))]
    return {name: run_file(run, run / name) for name in names if (run / name).is_file()}


def _prepare_out(out: Path, run: Path, force: bool) -> None:
    """Refuse an `out` whose replacement would delete the run or anything staging did not make."""
    real_out, real_run = out.resolve(), run.resolve()
    if real_out == real_run or real_run in real_out.parents:
        raise ReleaseError(f"{out}: inside the run directory {run}; choose an --out outside it.")
    if real_out in real_run.parents:
        raise ReleaseError(
            f"{out}: holds the run directory {run}, so replacing it would delete the run; choose "
            "an --out beside the run (or leave it out: the default is release-NAME beside it)."
        )
    if not out.exists() and not out.is_symlink():
        return
    if not out.is_dir() or out.is_symlink():
        raise ReleaseError(f"{out}: not a folder; choose another --out.")
    present = folder_entries(out)
    if not present:
        return
    if MANIFEST_FILE not in present:
        raise ReleaseError(
            f"{out}: not empty and not a staged release (no {MANIFEST_FILE}); rsi-hub only "
            "replaces a folder it staged, --force or not: choose another --out or empty it."
        )
    try:
        listed = read_manifest(out).files
    except ReleaseError as err:  # a malformed marker is no proof that staging made the folder
        raise ReleaseError(
            f"{out}: not empty and its {MANIFEST_FILE} is malformed, so it may not be a staged "
            "release; rsi-hub will not replace it: choose another --out or empty it."
        ) from err
    extra = sorted(set(present) - set(listed) - {MANIFEST_FILE})
    if extra and not force:
        raise ReleaseError(
            f"{out}: a staged release that also holds {len(extra)} file(s) staging did not write "
            f"({', '.join(extra[:3])}); move them out, or pass --force to delete them with it."
        )


def replication_section(run: Path, weights_sha: str) -> str | None:
    """The card's replication section when `run` won a replication, else None.

    Raises:
        ReleaseError: its `replication.json` names other weights for the released round.
    """
    from rsi_hub.release.card import replication_markdown

    report = ReplicationReport.read_if_any(run)
    if report is None:
        return None
    released = next((r for r in report.rounds if r.get("model") == report.winner), None)
    if released is None or released.get("weights_sha256") != weights_sha:
        raise ReleaseError(
            f"{run / REPLICATION_REPORT_FILE}: its {report.winner} scores were measured on other "
            f"weights than these ({weights_sha[:12]}…); re-run `rsi-hub replicate` to rebuild it."
        )
    return replication_markdown(report, (run / DOSE_RESPONSE_FILE).is_file())


def _check_run(run: Path, facts: Facts) -> dict[str, Path]:
    """Check the run; return `run_sources(run)` (checked before any of them is read)."""
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
    sources = run_sources(run)
    validate_model_folder(run)
    problems = evidence_problems(TrainingEvidence.read(run), facts, run / TRAINING_EVIDENCE_FILE)
    if problems:
        raise ReleaseError(
            "the run's training evidence is incomplete:\n  - " + "\n  - ".join(problems)
        )
    return sources


def _place_weights(sources: dict[str, Path], building: Path, digests: dict[str, str]) -> str:
    """Link (or copy) the shards (by name -> sha256) and copy their index; return the link mode."""
    modes = {link_or_copy(sources[n], building / n, digest) for n, digest in digests.items()}
    if SAFETENSORS_INDEX in sources:
        shutil.copyfile(sources[SAFETENSORS_INDEX], building / SAFETENSORS_INDEX)
    return "+".join(sorted(modes))


def _write_files(sources: dict[str, Path], building: Path, facts: Facts) -> list[str]:
    """`config.json` (without auto_map), the run's small files and the licence; return notes."""
    notes = []
    config_text = sources[CONFIG_FILE].read_text(encoding="utf-8")
    config, stripped = strip_auto_map(json.loads(config_text))
    if stripped:
        notes.append(
            f"{CONFIG_FILE}: removed auto_map (it points at code this release does not ship)"
        )
    (building / CONFIG_FILE).write_text(json.dumps(config, indent=2) + "\n", encoding="utf-8")
    for file_name in RUN_FILES:
        if file_name in sources:
            shutil.copyfile(sources[file_name], building / file_name)
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
            there is replaced; any other non-empty folder is refused, `force` or not, as are the
            run itself, a folder inside it and one that holds it.
        repo_id: the Hub repository (default: the facts' `repo_id`).
        force: also delete files in a previously staged `out` that staging did not write.
        facts_root: the folder holding the facts folders (default: the repository's `release/`).
        log: receives one line per step.

    Raises:
        ReleaseError: a broken input (serving contract, evidence, eval results bound to other
            weights, facts, a symlink out of the run, a bad `name`, `repo_id` or `out`); the
            message names the file and the fix. Nothing is written then.
    """
    run = Path(run)
    name = name or Path(os.path.abspath(run)).name  # `.` names the folder it stands for
    facts = load_facts(name, facts_root)
    if repo_id is not None:
        facts = dataclasses.replace(facts, repo_id=check_repo_id(repo_id, "--repo-id"))
    sources = _check_run(run, facts)
    out = Path(out) if out is not None else default_out(run, name)
    _prepare_out(out, run, force)

    weights = [p.name for p in weight_files(run)]
    log(f"hashing {len(weights)} weight file(s) of {run}")
    real = cached_sha256([sources[n] for n in weights])
    digests = {n: real[sources[n]] for n in weights}
    weights_sha = manifest_sha256(digests)
    results = read_eval_results(run, weights_sha)
    replication = replication_section(run, weights_sha)
    log(f"weights sha256 {weights_sha}; evaluation results: {', '.join(results) or 'none'}")

    building = fresh_staging_dir(out, "staging")  # clears one left by an interrupted staging
    try:
        link_mode = _place_weights(sources, building, digests)
        notes = _write_files(sources, building, facts)
        card = render_card(
            facts, results=results, weights_sha256=weights_sha, replication=replication
        )
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
    swap_in(building, out)  # the previous release stays whole until the new one is in
    log(
        f"staged {len(manifest.files) + 1} files ({manifest.total_bytes:,} bytes) in {out}; weights: {link_mode}"
    )
    for note in notes:
        log(f"note: {note}")
    return StagedRelease(out, facts, manifest, link_mode, results, notes)
