"""sha256 of files and of a checkpoint's weights: the identity every result and release binds to.

A leaf module (imports nothing else of rsi_hub) so that evaluation, release and any other stage
hash weights the same way. Files are read in large blocks with `readinto` into one reused buffer
(no per-block allocation) and several files are hashed on threads at once: hashlib releases the
GIL on large updates, so hashing the shards of a checkpoint uses every core.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

BLOCK_SIZE = 8 * 1024 * 1024
SAFETENSORS_INDEX = "model.safetensors.index.json"
SINGLE_SAFETENSORS = "model.safetensors"


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


def weight_files(folder: str | Path) -> list[Path]:
    """The safetensors files that hold a checkpoint's weights, in name order.

    The shards named by `model.safetensors.index.json` when it exists, else `model.safetensors`.

    Raises:
        FileNotFoundError: the folder has neither, or the index names a shard that is missing.
    """
    folder = Path(folder)
    index = folder / SAFETENSORS_INDEX
    if index.is_file():
        weight_map = json.loads(index.read_text(encoding="utf-8")).get("weight_map", {})
        files = [folder / name for name in sorted(set(weight_map.values()))]
    elif (folder / SINGLE_SAFETENSORS).is_file():
        files = [folder / SINGLE_SAFETENSORS]
    else:
        raise FileNotFoundError(
            f"{folder}: no {SINGLE_SAFETENSORS} and no {SAFETENSORS_INDEX}; "
            "save the model with save_pretrained (safetensors) first."
        )
    missing = [str(f) for f in files if not f.is_file()]
    if missing:
        raise FileNotFoundError(f"{index}: names shards that are missing: {', '.join(missing)}")
    return files


def combine_weight_digests(digests: dict[str, str]) -> str:
    """The weights sha256 from per-file digests keyed by file name.

    Defined as the sha256 of the `sha256sum`-style lines `"<hex>  <name>\\n"` in name order, so
    `sha256sum model*.safetensors | sha256sum` prints the same for a checkpoint in one folder.
    """
    lines = "".join(f"{digests[name]}  {name}\n" for name in sorted(digests))
    return hashlib.sha256(lines.encode("utf-8")).hexdigest()


def weights_sha256(folder: str | Path) -> str:
    """The sha256 that identifies a checkpoint's weights (see `combine_weight_digests`).

    Raises:
        FileNotFoundError: see `weight_files`.
    """
    files = weight_files(folder)
    digests = sha256_files(files)
    return combine_weight_digests({path.name: digests[path] for path in files})
