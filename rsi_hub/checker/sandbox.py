"""Run untrusted Python code against tests in a separate, limited process (for `code_tests`).

Two modes; the best one that works on this host is chosen once per process (`sandbox_mode()`):

**namespace** (Linux with util-linux `unshare` and either root or unprivileged user
namespaces). The child runs as PID 1 of new PID, mount and network namespaces:

- no network: the new network namespace has only a loopback interface, which is down;
- files: every mount is read-only except a fresh tmpfs of `DISK_BYTES` on the scratch
  directory, which is the child's working directory, HOME and TMPDIR and vanishes with it;
- user: `nobody` when the host process is root (directories `nobody` could not traverse on the
  way to the Python installation are covered by a tmpfs re-exposing only those paths, read-only),
  otherwise the caller's own user mapped to root of a user namespace with every capability
  dropped for good;
- limits: wall time (`timeout`, default `DEFAULT_TIMEOUT` s; the whole process group is killed
  and the PID namespace goes with it), address space `MEMORY_BYTES`, `NPROC` processes (per user;
  as `nobody` this counts every process of `nobody` on the host), CPU seconds, file size,
  256 open files, no core dumps, no new privileges.

**rlimits** (fallback when namespaces are unavailable; `sandbox_mode()` says so). Same resource
and time limits and a fresh scratch directory as working directory, but weaker isolation,
stated honestly: network is blocked only by replacing the `socket` module's constructors inside
the child (raw `_socket` tricks or subprocesses can bypass it); files outside the scratch
directory are protected only by permissions (as root, the child runs as `nobody` after
importing common standard modules, so other modules under a private Python install may fail to
import; as a normal user, the child can write wherever that user can); a process that calls
`setsid()` escapes the group kill and lives until its CPU limit.

In both modes the verdict comes back as one JSON line carrying a random nonce on a descriptor
the tests do not print to, so printing "ok" or calling `sys.exit(0)` cannot pass a test. Code
that deliberately inspects the interpreter to forge the verdict is not defended against: this
sandbox protects the host, not the integrity of a score against an adversarial program.
"""

from __future__ import annotations

import contextlib
import json
import os
import pwd
import secrets
import selectors
import shutil
import signal
import subprocess
import sys
import sysconfig
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

DEFAULT_TIMEOUT = 10.0
MEMORY_BYTES = 1 << 30
NPROC = 64
FILE_BYTES = 16 << 20
DISK_BYTES = 64 << 20
_RESULT_CAP = 1 << 16
_CHILD = str(Path(__file__).with_name("_sandbox_child.py"))


@dataclass(frozen=True, slots=True)
class SandboxResult:
    """Outcome of one sandboxed run: `ok`, a reason when not ok, and whether it timed out."""

    ok: bool
    reason: str = ""
    timed_out: bool = False


_mode_lock = threading.Lock()
_mode: str | None = None


def _nobody() -> tuple[int, int]:
    try:
        pw = pwd.getpwnam("nobody")
        return pw.pw_uid, pw.pw_gid
    except KeyError:
        return 65534, 65534


def _expose_paths() -> list[str]:
    paths = {sys.prefix, sys.base_prefix, sys.exec_prefix, os.path.dirname(sys.executable)}
    paths.update(p for p in sysconfig.get_paths().values() if p)
    paths.update(p for p in sys.path if p and os.path.isabs(p))
    return sorted(p for p in paths if os.path.exists(p))


def _command(mode: str, cfg: dict) -> list[str]:
    base = [sys.executable, "-I", "-B", _CHILD, json.dumps(cfg)]
    if mode != "namespace":
        return base
    ns = ["unshare", "--fork", "--pid", "--kill-child", "--mount", "--net", "--mount-proc"]
    if os.geteuid() != 0:
        ns += ["--user", "--map-root-user"]
    return [*ns, "--", *base]


def _run(mode: str, code: str, tests: list[str], entry_point: str, timeout: float) -> SandboxResult:
    root = os.geteuid() == 0
    uid, gid = _nobody() if root else (None, None)
    scratch = tempfile.mkdtemp(prefix="rsi-checker-")
    nonce = secrets.token_hex(16)
    proc: subprocess.Popen[bytes] | None = None
    try:
        payload = {"code": code, "tests": tests, "entry_point": entry_point, "nonce": nonce}
        with open(os.path.join(scratch, ".payload.json"), "w", encoding="utf-8") as f:
            json.dump(payload, f)
        if uid is not None:
            os.chown(scratch, uid, gid)
        cfg = {
            "mode": mode,
            "scratch": scratch,
            "uid": uid,
            "gid": gid,
            "memory": MEMORY_BYTES,
            "nproc": NPROC,
            "cpu": int(timeout) + 2,
            "fsize": FILE_BYTES,
            "disk": DISK_BYTES,
            "expose": _expose_paths(),
        }
        env = {
            "PATH": "/usr/local/bin:/usr/bin:/bin",
            "HOME": scratch,
            "TMPDIR": scratch,
            "LANG": "C.UTF-8",
            "OPENBLAS_NUM_THREADS": "1",
            "OMP_NUM_THREADS": "1",
            # Lets tests find leftovers of this parent; the child never reads it.
            "RSI_CHECKER_SANDBOX": str(os.getpid()),
        }
        deadline = time.monotonic() + timeout
        proc = subprocess.Popen(
            _command(mode, cfg),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            cwd=scratch,
            env=env,
            start_new_session=True,
        )
        out, timed_out = _read_until(proc, deadline)
        if timed_out:
            return SandboxResult(False, f"timed out after {timeout:g} s", True)
        rc = proc.wait()
        return _interpret(out, nonce, rc)
    except OSError as err:
        return SandboxResult(False, f"the sandbox could not run the code ({err.strerror or err})")
    finally:
        if proc is not None:
            _kill(proc)
        shutil.rmtree(scratch, ignore_errors=True)


def _read_until(proc: subprocess.Popen[bytes], deadline: float) -> tuple[bytes, bool]:
    """Read the child's result channel until EOF or the deadline, keeping at most a small cap."""
    assert proc.stdout is not None
    buf = bytearray()
    with selectors.DefaultSelector() as sel:
        sel.register(proc.stdout, selectors.EVENT_READ)
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                return bytes(buf), True
            if not sel.select(left):
                continue
            chunk = os.read(proc.stdout.fileno(), 65536)
            if not chunk:
                break
            if len(buf) < _RESULT_CAP:
                buf += chunk[: _RESULT_CAP - len(buf)]
    # EOF: the child closed its result channel; give it the rest of the time to exit.
    try:
        proc.wait(max(deadline - time.monotonic(), 0.01))
    except subprocess.TimeoutExpired:
        return bytes(buf), True
    return bytes(buf), False


def _kill(proc: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(5)
    if proc.stdout is not None:
        proc.stdout.close()


def _interpret(out: bytes, nonce: str, rc: int) -> SandboxResult:
    for raw in reversed(out.splitlines()):
        try:
            msg = json.loads(raw)
        except ValueError:
            continue
        if isinstance(msg, dict) and "setup_error" in msg:
            return SandboxResult(False, "the sandbox could not start: " + _last_line(msg))
        if isinstance(msg, dict) and msg.get("nonce") == nonce:
            return SandboxResult(bool(msg.get("ok")), str(msg.get("reason", "")))
    if rc < 0:
        name = signal.Signals(-rc).name if -rc in signal.Signals._value2member_map_ else -rc
        return SandboxResult(False, f"the code was killed by {name} (a resource limit?)")
    return SandboxResult(False, f"the code exited without a verdict (exit code {rc})")


def _last_line(msg: dict) -> str:
    lines = str(msg.get("setup_error", "")).strip().splitlines()
    return lines[-1] if lines else "unknown error"


def _probe(mode: str) -> bool:
    """Whether `mode` works here and, for namespaces, really blocks writes outside scratch."""
    outside = tempfile.mkdtemp(prefix="rsi-checker-probe-")
    try:
        os.chmod(outside, 0o777)  # writable for anyone: only the read-only view may stop it
        target = os.path.join(outside, "x")
        test = (
            "import socket\n"
            f"try:\n    open({target!r}, 'w').close()\nexcept OSError:\n    pass\n"
            "else:\n    raise AssertionError('wrote outside the scratch directory')\n"
            "try:\n    socket.create_connection(('127.0.0.1', 9), timeout=1)\n"
            "except OSError:\n    pass\n"
            "else:\n    raise AssertionError('network reachable')\n"
            "assert f() == 1\n"
        )
        res = _run(mode, "def f():\n    return 1\n", [test], "f", 20.0)
        return res.ok and not os.path.exists(target)
    finally:
        shutil.rmtree(outside, ignore_errors=True)


def sandbox_mode() -> str:
    """The sandbox mode used on this host: `"namespace"` or `"rlimits"` (probed once)."""
    global _mode
    with _mode_lock:
        if _mode is None:
            can_ns = sys.platform == "linux" and shutil.which("unshare") is not None
            _mode = "namespace" if can_ns and _probe("namespace") else "rlimits"
        return _mode


def run_tests(
    code: str, tests: list[str], entry_point: str, timeout: float = DEFAULT_TIMEOUT
) -> SandboxResult:
    """Run `code`, then each test, in a sandboxed child; never raises for anything the code does.

    The code is executed with `__name__ == "__solution__"` (so `if __name__ == "__main__":`
    blocks do not run), `entry_point` must then name a callable, and each test is executed in
    the same namespace; a test that defines a new `check` function has it called with the entry
    point (HumanEval style). The first failing test ends the run.
    """
    return _run(sandbox_mode(), code, tests, entry_point, timeout)
