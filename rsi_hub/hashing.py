"""sha256 of files, and the one definition of a model folder's weights hash.

Every package that hashes files or names a set of weights uses this module: evaluation binds
each result folder to `weights_sha256(run)`, release checks that the weights it ships are the
ones that were scored, synthesis and experiments record which weights made their outputs.

A leaf module: besides `rsi_hub.errors` (which imports nothing) it imports nothing of rsi_hub, so
any package may use it whatever its place in the dependency order. Files are read in large
blocks with `readinto` into one reused buffer (no per-block allocation), and several files are
hashed on threads at once: hashlib releases the GIL on large updates, so hashing the shards of a
checkpoint uses every core.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from rsi_hub.errors import RsiHubError

WEIGHTS_GLOB = "model*.safetensors"
BLOCK_SIZE = 8 * 1024 * 1024


def sha256_file(path: str | Path) -> str:
    """The hex sha256 of one file, as `sha256sum` prints it."""
    digest = hashlib.sha256()
    buffer = bytearray(BLOCK_SIZE)
    view = memoryview(buffer)
    with open(path, "rb", buffering=0) as handle:
        while True:
            read = handle.readinto(buffer)
            if not read:
                break
            digest.update(view[:read])
    return digest.hexdigest()


def sha256_files(paths: Iterable[str | Path], *, workers: int | None = None) -> dict[Path, str]:
    """The sha256 of each file, hashed in parallel; keys are the given paths as `Path`s.

    Args:
        paths: files to hash.
        workers: threads to use (default: one per CPU, at most one per file).
    """
    files = [Path(p) for p in paths]
    if not files:
        return {}
    workers = workers or min(len(files), os.cpu_count() or 1)
    if workers <= 1:
        return {path: sha256_file(path) for path in files}
    # Largest first, so that one big shard started last does not leave the other cores idle.
    order = sorted(files, key=lambda p: p.stat().st_size, reverse=True)
    with ThreadPoolExecutor(max_workers=workers) as pool:
        digests = dict(zip(order, pool.map(sha256_file, order), strict=True))
    return {path: digests[path] for path in files}


def weight_shards(folder: str | Path) -> list[Path]:
    """The `model*.safetensors` files of `folder` in name order (empty when there are none)."""
    return sorted(p for p in Path(folder).glob(WEIGHTS_GLOB) if p.is_file())


def weights_files_sha256(folder: str | Path) -> dict[str, str]:
    """The sha256 of every `model*.safetensors` file of `folder`, keyed by file name, name order.

    These per-file digests are what the Hub shows as the LFS oid of each shard.

    Raises:
        RsiHubError: the folder holds no `model*.safetensors` file.
    """
    files = weight_shards(folder)
    if not files:
        raise RsiHubError(
            f"{folder}: no {WEIGHTS_GLOB} file; pass a run directory that holds the weights."
        )
    digests = sha256_files(files)
    return {p.name: digests[p] for p in files}


def manifest_sha256(files: dict[str, str]) -> str:
    """The combined digest of `weights_sha256` from per-file digests (name -> sha256)."""
    manifest = "".join(f"{files[name]}  {name}\n" for name in sorted(files))
    return hashlib.sha256(manifest.encode("utf-8")).hexdigest()


def weights_sha256(folder: str | Path) -> str:
    """One sha256 for all the weights of a model folder.

    It is the sha256 of the manifest text `"<file sha256>  <file name>\\n"` over the
    `model*.safetensors` files in name order, which is exactly what
    `LC_ALL=C sha256sum model*.safetensors | sha256sum` prints in the folder, so anyone can
    check it without rsi-hub. Config, tokenizer and index files are not part of it: they do not
    change what the weights compute.

    Raises:
        RsiHubError: the folder holds no `model*.safetensors` file.
    """
    return manifest_sha256(weights_files_sha256(folder))
