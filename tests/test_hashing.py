"""`rsi_hub.hashing`: file digests and the one weights hash, as `sha256sum` computes them."""

from __future__ import annotations

import hashlib
import shutil
import subprocess
from pathlib import Path

import pytest

from rsi_hub import hashing
from rsi_hub.errors import RsiHubError


def test_sha256_file_and_files_are_hashlib_digests(tmp_path: Path) -> None:
    sizes = {"empty": 0, "small": 5, "block": hashing.BLOCK_SIZE, "more": hashing.BLOCK_SIZE + 3}
    paths = []
    for name, size in sizes.items():
        path = tmp_path / name
        path.write_bytes(bytes(i % 251 for i in range(size)))
        paths.append(path)
    expected = {p: hashlib.sha256(p.read_bytes()).hexdigest() for p in paths}
    assert {p: hashing.sha256_file(p) for p in paths} == expected
    assert hashing.sha256_files(paths, workers=3) == expected
    assert list(hashing.sha256_files(reversed(paths), workers=1)) == paths[::-1]
    assert hashing.sha256_files([]) == {}


def test_weights_sha256_is_sha256sum_of_the_shards(tmp_path: Path) -> None:
    (tmp_path / "model-00002-of-00002.safetensors").write_bytes(b"second")
    (tmp_path / "model-00001-of-00002.safetensors").write_bytes(b"first")
    (tmp_path / "config.json").write_text("{}")  # not part of the digest
    files = hashing.weights_files_sha256(tmp_path)
    assert list(files) == sorted(files)
    assert files["model-00001-of-00002.safetensors"] == hashlib.sha256(b"first").hexdigest()
    manifest = "".join(f"{sha}  {name}\n" for name, sha in sorted(files.items()))
    expected = hashlib.sha256(manifest.encode()).hexdigest()
    assert hashing.weights_sha256(tmp_path) == expected
    if shutil.which("sha256sum"):
        shell = subprocess.run(
            "LC_ALL=C sha256sum model*.safetensors | sha256sum",
            shell=True,
            cwd=tmp_path,
            capture_output=True,
            text=True,
            check=True,
        )
        assert shell.stdout.split()[0] == expected
    with pytest.raises(RsiHubError, match="no model"):
        hashing.weights_sha256(tmp_path / "config.json")


def test_weights_sha256_is_the_sha256sum_manifest(tiny_run: Path) -> None:
    shards = sorted(tiny_run.glob("model*.safetensors"))
    manifest = "".join(f"{hashing.sha256_file(p)}  {p.name}\n" for p in shards)
    assert hashing.weights_sha256(tiny_run) == hashlib.sha256(manifest.encode()).hexdigest()


def test_weights_sha256_needs_weights(tmp_path: Path) -> None:
    with pytest.raises(RsiHubError, match=r"model\*\.safetensors"):
        hashing.weights_sha256(tmp_path)


def test_hashing_is_a_leaf() -> None:
    """Any package may import it: it imports nothing of rsi_hub but the import-free errors."""
    source = Path(hashing.__file__).read_text()
    imports = [
        line for line in source.splitlines() if line.startswith(("from rsi_hub", "import rsi_hub"))
    ]
    assert imports == ["from rsi_hub.errors import RsiHubError"]
