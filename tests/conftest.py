"""Shared fixtures: the tiny checkpoint is built once per test session (seconds on a CPU)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

# Tests never reach a hub: any attempt fails at once instead of hanging on the network.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


@pytest.fixture(scope="session")
def tiny_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A freshly built tiny run directory. Read-only by convention: copy it to modify it."""
    from rsi_hub.tiny import build_tiny

    return build_tiny(tmp_path_factory.mktemp("tiny") / "run", seed=0)


@pytest.fixture(scope="session")
def stopping_run(tiny_run: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The tiny run made to stop at ids 11 and 2 (tests/serving_server.py). Read-only."""
    from tests.serving_server import build_stopping_variant

    return build_stopping_variant(tiny_run, tmp_path_factory.mktemp("stopping") / "run")


@pytest.fixture(scope="session")
def stopping_server(stopping_run: Path, tmp_path_factory: pytest.TempPathFactory):
    """One real `rsi-hub serve stopping_run` (transformers serve) process for the session."""
    from tests.serving_server import serving

    with serving(stopping_run, tmp_path_factory.mktemp("serve_log") / "server.log") as server:
        yield server
