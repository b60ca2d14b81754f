"""Fast sha256 of files: what a release manifest is built from (gigabytes of shards).

A leaf module (imports nothing else of rsi_hub). Files are read in large blocks with `readinto`
into one reused buffer (no per-block allocation), and several files are hashed on threads at
once: hashlib releases the GIL on large updates, so hashing the shards of a checkpoint uses every
core. The weights' identity (one digest over the shards) is `rsi_hub.evaluate.provenance`'s.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

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
