"""Shared fixtures: the tiny checkpoint is built once per test session (seconds on a CPU)."""

from __future__ import annotations

import os
from collections.abc import Iterator
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


@pytest.fixture(scope="session")
def nano_demo(tmp_path_factory: pytest.TempPathFactory):
    """One `rsi-hub demo` at its default budget: round 0 of the nano replication (a few minutes),
    both models scored on the same IF-818 prompts, round 0 released. Read-only."""
    from rsi_hub.demo import run_demo

    return run_demo(tmp_path_factory.mktemp("nano_demo") / "demo")


SLURM_SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "slurm_local.sh"


def free_port_pair() -> int:
    """A port P with P and P + 1 free on this machine (slurmctld's and slurmd's)."""
    import socket

    for _ in range(50):
        with socket.socket() as probe:
            probe.bind(("", 0))
            port = probe.getsockname()[1]
        if port >= 65535:
            continue
        try:
            with socket.socket() as first, socket.socket() as second:
                first.bind(("", port))
                second.bind(("", port + 1))
        except OSError:
            continue
        return port
    raise RuntimeError("no two consecutive free ports found")


@pytest.fixture(scope="session")
def slurm_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A one-node Slurm cluster started by scripts/slurm_local.sh in a private state folder, on
    free ports (beside any cluster already running here); yields its slurm.conf, exported as
    SLURM_CONF for the session's Slurm commands. Stopped by the same script, whatever happens.
    """
    import subprocess

    state = tmp_path_factory.mktemp("slurm")
    env = {
        **os.environ,
        "RSI_HUB_SLURM_DIR": str(state),
        "RSI_HUB_SLURM_PORT": str(free_port_pair()),
    }
    previous = os.environ.get("SLURM_CONF")
    try:
        # Up to minutes only when the script still has to install the packages (apt).
        up = subprocess.run(
            ["bash", str(SLURM_SCRIPT), "up"], env=env, capture_output=True, text=True, timeout=900
        )
        assert up.returncode == 0, f"slurm_local.sh up failed:\n{up.stderr}"
        conf = state / "slurm.conf"
        assert up.stdout.strip() == f"export SLURM_CONF={conf}"
        os.environ["SLURM_CONF"] = str(conf)
        yield conf
    finally:
        down = subprocess.run(
            ["bash", str(SLURM_SCRIPT), "down"],
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        if previous is None:
            os.environ.pop("SLURM_CONF", None)
        else:
            os.environ["SLURM_CONF"] = previous
        assert down.returncode == 0, f"slurm_local.sh down failed:\n{down.stderr}"
