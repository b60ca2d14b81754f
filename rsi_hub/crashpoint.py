"""A test-only kill switch that makes a writer die at an exact step, as a power cut or OOM would.

Every durable step of a writer (a write handed to the OS, an fsync, a rename, a delete) is
followed by `crash_point()`. With `RSI_HUB_KILL_AT=N` in the environment the process sends
itself SIGKILL at its N-th crash point: no `finally`, no buffered flush, no clean-up runs. The
kill sweep (`tests/test_kill_sweep.py`) runs each writer with N = 1, 2, ... until it finishes,
so every step is a kill site. Unset (always, outside tests), it costs one dict lookup.
"""

from __future__ import annotations

import os
import signal

KILL_AT_ENV = "RSI_HUB_KILL_AT"
_reached = 0  # crash points passed in this process while the switch is set


def crash_point() -> None:
    """SIGKILL this process if this is the `RSI_HUB_KILL_AT`-th crash point; else do nothing."""
    global _reached
    target = os.environ.get(KILL_AT_ENV)
    if not target:
        return
    _reached += 1
    if _reached == int(target):
        os.kill(os.getpid(), signal.SIGKILL)
