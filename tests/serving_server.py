"""A real `rsi-hub serve` process for tests and benchmarks, and a tiny model that stops.

`serving(run)` starts `python -m rsi_hub serve RUN --port P` (what a user runs: the launcher
execs the engine in the same process) on loopback and a free port, waits a bounded time for
`/health`, shows the server's log when it does not come up, and stops it by PID.

The tiny random checkpoint never emits a stop token, so `build_stopping_variant` copies it and
makes its output layer emit `<|im_end|>` (id 11) where it would emit token 276 and `</s>` (id 2)
where it would emit 988 (each row scaled by 1.05 so that it wins the argmax): on the first 20
IF-818 prompts, greedy answers then end at id 11, at id 2, or at the length limit. The weights
change and nothing else, so the folder still passes `rsi-hub validate`.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
START_TIMEOUT_S = 300  # the first import of torch + transformers on a busy 2-core machine
STOP_AS = {11: 276, 2: 988}  # stop id -> the token whose output row it copies


def build_stopping_variant(tiny_run: Path, dest: Path) -> Path:
    """A copy of the tiny run whose greedy answers end at ids 11 and 2 (see the module doc)."""
    from safetensors.torch import load_file, save_file

    shutil.copytree(tiny_run, dest)
    weights = dest / "model.safetensors"
    tensors = load_file(weights)
    head = tensors["lm_head.weight"]
    for stop_id, token in STOP_AS.items():
        head[stop_id] = head[token] * 1.05
    save_file(tensors, weights, metadata={"format": "pt"})
    return dest


def free_port() -> int:
    """A TCP port free on loopback now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@dataclass(frozen=True)
class Server:
    """A running server: its process, base URL, the model id it is pinned to, and its log."""

    process: subprocess.Popen
    base_url: str
    model_id: str
    log: Path

    def log_tail(self, chars: int = 4000) -> str:
        return self.log.read_text(encoding="utf-8", errors="replace")[-chars:]


def _healthy(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=2) as response:
            return response.status == 200
    except OSError:
        return False


@contextmanager
def serving(run: Path, log: Path, extra_args: tuple[str, ...] = ()) -> Iterator[Server]:
    """Run `rsi-hub serve RUN` on loopback and a free port until the block ends.

    Raises:
        RuntimeError: the server exited or was not healthy within START_TIMEOUT_S; the message
            holds the end of its log.
    """
    port = free_port()
    env = {
        **os.environ,
        "PYTHONPATH": str(REPO),
        "HF_HUB_OFFLINE": "1",
        "TOKENIZERS_PARALLELISM": "false",
        # One thread: on a shared 2-core machine more threads only spin (see bench_eval.py).
        "OMP_NUM_THREADS": "1",
    }
    argv = [sys.executable, "-m", "rsi_hub", "serve", str(run), "--port", str(port), *extra_args]
    with log.open("w", encoding="utf-8") as sink:
        process = subprocess.Popen(argv, stdout=sink, stderr=subprocess.STDOUT, env=env)
    server = Server(process, f"http://127.0.0.1:{port}/v1", str(run.resolve()), log)
    try:
        deadline = time.monotonic() + START_TIMEOUT_S
        while not _healthy(f"http://127.0.0.1:{port}/health"):
            if process.poll() is not None or time.monotonic() > deadline:
                state = (
                    f"exited with {process.returncode}"
                    if process.poll() is not None
                    else (f"not healthy after {START_TIMEOUT_S} s")
                )
                raise RuntimeError(f"rsi-hub serve {state}; its log:\n{server.log_tail()}")
            time.sleep(0.3)
        yield server
    finally:
        process.terminate()  # by PID: the launcher exec'd the engine in this very process
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
