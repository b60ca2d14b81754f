"""The release manifest: size and sha256 of every file of a staged release.

`release_manifest.json` is shipped with the release (so users can check what they downloaded)
and is what the push compares the remote repository against. It holds no timestamps: staging
the same run twice gives the same bytes, so a re-run has nothing new to upload.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from rsi_hub.errors import ReleaseError, RunDirError, RunFileMissingError
from rsi_hub.hashing import BLOCK_SIZE, sha256_files
from rsi_hub.rundir import RELEASE_MANIFEST_FILE as MANIFEST_FILE
from rsi_hub.rundir import FileEntry, ReleaseManifest, release_manifest_path

# The record itself (fields, JSON form, schema version) is rsi_hub.rundir's ReleaseManifest.
Manifest = ReleaseManifest

# sha256 by (device, inode, size, mtime): a hard-linked shard is the same inode as the run's file,
# so staging and validation in one process hash it once. Not ctime: creating a link changes it.
_DIGESTS: dict[tuple[int, int, int, int], str] = {}


def _stat_key(path: Path) -> tuple[int, int, int, int]:
    st = path.stat()
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)


def cached_sha256(paths: list[Path]) -> dict[Path, str]:
    """sha256 of each file, hashing in parallel only those not hashed before in this process."""
    keys = {path: _stat_key(path) for path in paths}
    todo = [path for path in paths if keys[path] not in _DIGESTS]
    for path, digest in sha256_files(todo).items():
        _DIGESTS[keys[path]] = digest
    return {path: _DIGESTS[keys[path]] for path in paths}


def remember_sha256(path: Path, digest: str) -> None:
    """Record the digest of a file this process just wrote (and hashed while writing)."""
    _DIGESTS[_stat_key(path)] = digest


def git_blob_sha1(path: str | Path) -> str:
    """The git object id of a file's content (what the Hub reports for files not stored in LFS)."""
    path = Path(path)
    digest = hashlib.sha1(f"blob {path.stat().st_size}\0".encode(), usedforsecurity=False)
    with open(path, "rb") as handle:
        while block := handle.read(BLOCK_SIZE):
            digest.update(block)
    return digest.hexdigest()


def build_manifest(folder: str | Path, *, name: str, repo_id: str, weights_sha256: str) -> Manifest:
    """Hash every file under `folder` (but an existing manifest) into a manifest."""
    folder = Path(folder)
    paths = sorted(p for p in folder.rglob("*") if p.is_file() and p != folder / MANIFEST_FILE)
    digests = cached_sha256(paths)
    files = {
        p.relative_to(folder).as_posix(): FileEntry(size=p.stat().st_size, sha256=digests[p])
        for p in paths
    }
    return Manifest(name=name, repo_id=repo_id, weights_sha256=weights_sha256, files=files)


def read_manifest(folder: str | Path) -> Manifest:
    """Read the manifest of a staged release.

    Raises:
        ReleaseError: missing or malformed (names the file and the fix).
    """
    try:
        return ReleaseManifest.read(folder)
    except RunFileMissingError as err:
        raise ReleaseError(
            f"{release_manifest_path(folder)}: missing, so {folder} is not a staged release; "
            "stage the release again with `rsi-hub release RUN`."
        ) from err
    except RunDirError as err:
        raise ReleaseError(str(err)) from err


def folder_entries(folder: str | Path) -> list[str]:
    """Every entry below `folder` but its sub-folders, as sorted relative POSIX paths.

    Symlinks are listed (to files or folders alike) and never followed.
    """
    found = []
    for parent, dirs, files in os.walk(folder):
        links = [d for d in dirs if os.path.islink(os.path.join(parent, d))]
        found += [os.path.relpath(os.path.join(parent, n), folder) for n in [*files, *links]]
    return sorted(Path(rel).as_posix() for rel in found)


def manifest_problems(folder: str | Path, manifest: Manifest, *, fresh: bool = False) -> list[str]:
    """Every file missing, extra, a symlink, or of another size or sha256 than the manifest says.

    Args:
        folder: the staged release.
        manifest: its manifest.
        fresh: hash every byte again instead of trusting this process's digest cache, which
            keys on (device, inode, size, mtime): an edit that restores the mtime slips past it.
            The check right before a push uses it.
    """
    folder = Path(folder)
    fix = "stage the release again with `rsi-hub release RUN`"
    entries = folder_entries(folder)
    links = [rel for rel in entries if (folder / rel).is_symlink()]
    # A push uploads what a link points to, which may be anything on this machine.
    problems = [
        f"{folder / rel}: a symlink (to {os.readlink(folder / rel)}); a release holds real files "
        f"only, and a push would send whatever the link points to; {fix}."
        for rel in links
    ]
    on_disk = set(entries) - set(links) - {MANIFEST_FILE}
    problems += [
        f"{folder / rel}: listed in {MANIFEST_FILE} but missing; {fix}."
        for rel in sorted(set(manifest.files) - on_disk - set(links))
    ]
    problems += [
        f"{folder / rel}: not listed in {MANIFEST_FILE}; remove it or {fix}."
        for rel in sorted(on_disk - set(manifest.files))
    ]
    present = sorted(set(manifest.files) & on_disk)
    sized = [rel for rel in present if os.path.getsize(folder / rel) == manifest.files[rel].size]
    problems += [
        f"{folder / rel}: size {os.path.getsize(folder / rel)} but {MANIFEST_FILE} says "
        f"{manifest.files[rel].size}; {fix}."
        for rel in present
        if rel not in sized
    ]
    paths = [folder / rel for rel in sized]
    digests = (
        {Path(p): d for p, d in sha256_files(paths).items()} if fresh else cached_sha256(paths)
    )
    problems += [
        f"{folder / rel}: sha256 {digests[folder / rel][:12]}… but {MANIFEST_FILE} says "
        f"{manifest.files[rel].sha256[:12]}… (changed or corrupted after staging); {fix}."
        for rel in sized
        if digests[folder / rel] != manifest.files[rel].sha256
    ]
    return problems
