"""Which weights a result belongs to: sha256 digests of a model folder's safetensors files.

Evaluation binds every result folder to the weights it scored, and the release stage checks that
the weights it uploads are the ones that were scored, so both use these two helpers.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from rsi_hub.errors import RsiHubError

WEIGHTS_GLOB = "model*.safetensors"
_CHUNK = 8 * 1024 * 1024


def file_sha256(path: str | Path) -> str:
    """The hex sha256 of one file's bytes, read in chunks (weights shards are gigabytes)."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while chunk := handle.read(_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def weights_files_sha256(folder: str | Path) -> dict[str, str]:
    """The sha256 of every `model*.safetensors` file of `folder`, keyed by file name, name order.

    These per-file digests are what the Hub shows as the LFS oid of each shard.

    Raises:
        RsiHubError: the folder holds no `model*.safetensors` file.
    """
    folder = Path(folder)
    files = sorted(p for p in folder.glob(WEIGHTS_GLOB) if p.is_file())
    if not files:
        raise RsiHubError(
            f"{folder}: no {WEIGHTS_GLOB} file; pass a run directory that holds the weights."
        )
    return {p.name: file_sha256(p) for p in files}


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


def manifest_sha256(files: dict[str, str]) -> str:
    """The combined digest of `weights_sha256` from per-file digests (name -> sha256)."""
    manifest = "".join(f"{files[name]}  {name}\n" for name in sorted(files))
    return hashlib.sha256(manifest.encode("utf-8")).hexdigest()
