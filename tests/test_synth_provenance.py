"""The weights hash in synth provenance is the project's one convention."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from rsi_hub.synth.provenance import file_sha256, weights_sha256


def test_weights_sha256_is_the_sha256sum_manifest(tiny_run: Path) -> None:
    shards = sorted(tiny_run.glob("model*.safetensors"))
    manifest = "".join(f"{file_sha256(p)}  {p.name}\n" for p in shards)
    assert weights_sha256(tiny_run) == hashlib.sha256(manifest.encode()).hexdigest()


def test_weights_sha256_agrees_with_evaluation(tiny_run: Path) -> None:
    evaluate = pytest.importorskip("rsi_hub.evaluate.provenance")
    assert weights_sha256(tiny_run) == evaluate.weights_sha256(tiny_run)


def test_weights_sha256_needs_weights(tmp_path: Path) -> None:
    from rsi_hub.errors import RsiHubError

    with pytest.raises(RsiHubError, match=r"model\*\.safetensors"):
        weights_sha256(tmp_path)
