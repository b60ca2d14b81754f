"""Run untrusted Python code in a separate, limited process that sees nothing of the host.

Two backends; the first that works on this host, verified by a probe, is chosen once per
process and named by `sandbox_backend()` (evaluation records it in meta.json):

**bwrap** (Debian's `bubblewrap`, preferred): `bwrap --unshare-all --unshare-user
--disable-userns --die-with-parent` with explicit read-only binds of the Python runtime only
(the interpreter's prefix `sys.base_prefix` with its site-packages hidden, and the system
libraries), a fresh /proc, a minimal /dev and a size-capped tmpfs on /tmp as working directory,
HOME and TMPDIR. No host /home, /root, /run, /tmp or working tree; no network; no unix socket of
the host; no further user namespaces (and, without capabilities, no other namespaces). The code
always runs under an unprivileged host uid: as root, a small pre-stage makes the runtime
traversable for `nobody` in a private mount namespace, becomes `nobody` and then runs bwrap.

**fallback** (util-linux `unshare`, when bwrap is absent): new PID, mount and network namespaces;
the child builds a new root on a tmpfs with the same read-only view and chroots into it (a
chrooted process cannot create user namespaces), then runs as `nobody` (as root) or with every
capability dropped (in a user namespace, as a normal user). If any step of that view fails, the
child stops before running the code and the check fails: it never runs code that sees the host.

If neither works, `sandbox_backend()` is `"none"` and every run is refused with a reason that says
to install bubblewrap. Limits in both backends: wall time (`timeout`; the process group is
killed and the PID namespace goes with it), address space `MEMORY_BYTES`, `NPROC` processes (per
host uid: as `nobody` this counts every process of `nobody` on the host), CPU seconds, file size,
256 open files, no core dumps, no new privileges. Only the standard library can be imported.

The untrusted process is never trusted with the verdict: `run_calls` returns the values the
entry point returned (plain JSON only) and the caller compares them with the expected ones.
`run_tests` (free-form asserts decided inside the untrusted process) is weaker: code that
tampers with its own interpreter can make it pass.
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
import socket
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rsi_hub.checker.sandbox_view import RuntimeView, runtime_view

DEFAULT_TIMEOUT = 10.0
MEMORY_BYTES = 1 << 30
NPROC = 64
FILE_BYTES = 16 << 20
DISK_BYTES = 64 << 20
_RESULT_CAP = 8 << 20
_CHILD_SOURCE = Path(__file__).with_name("_sandbox_child.py").read_text(encoding="utf-8")
BACKENDS: tuple[str, ...] = ("bwrap", "fallback")


@dataclass(frozen=True, slots=True)
class SandboxResult:
    """Outcome of one sandboxed run.

    `ok` is False when the run failed as a whole (`reason` says why: no compile, no function,
    a crash, a timeout, a refused sandbox). For `run_calls`, `results` then holds one entry per
    call, `{"value": plain JSON}` or `{"error": text}`, still to be compared by the caller; for
    `run_tests`, `ok` is the (weaker) verdict of the tests.
    """

    ok: bool
    reason: str = ""
    timed_out: bool = False
    results: list[dict[str, Any]] | None = None


_backend_lock = threading.Lock()
_backend: str | None = None


def _nobody() -> tuple[int, int]:
    try:
        pw = pwd.getpwnam("nobody")
        return pw.pw_uid, pw.pw_gid
    except KeyError:
        return 65534, 65534


def _python(view: RuntimeView, cfg: dict[str, Any]) -> list[str]:
    return [view.python, "-I", "-S", "-B", "-c", _CHILD_SOURCE, json.dumps(cfg)]


def _bwrap_argv(view: RuntimeView, cfg: dict[str, Any]) -> list[str]:
    argv = [shutil.which("bwrap") or "bwrap", "--unshare-all", "--unshare-user"]
    argv += ["--disable-userns", "--die-with-parent"]
    for path in view.ro:
        argv += ["--ro-bind", path, path]
    for path in view.hide:
        argv += ["--tmpfs", path, "--remount-ro", path]
    for link, target in view.symlinks:
        argv += ["--symlink", target, link]
    argv += ["--proc", "/proc", "--dev", "/dev", "--size", str(DISK_BYTES), "--tmpfs", "/tmp"]
    argv += ["--chdir", "/tmp", "--"]
    return argv + _python(view, {**cfg, "stage": "bwrap"})


def _command(backend: str, cfg: dict[str, Any], root_dir: str) -> list[str]:
    view = runtime_view()
    if backend == "bwrap":
        argv = _bwrap_argv(view, cfg)
        if os.geteuid() != 0:
            return argv
        uid, gid = _nobody()
        pre = {"stage": "prestage", "expose": view.ro, "uid": uid, "gid": gid, "bwrap": argv}
        return _python(view, pre)
    ns = ["unshare", "--fork", "--pid", "--kill-child", "--mount", "--net", "--mount-proc"]
    uid, gid = _nobody() if os.geteuid() == 0 else (None, None)
    if uid is None:
        ns += ["--user", "--map-root-user"]
    fb = {**cfg, "stage": "fallback", "root": root_dir, "uid": uid, "gid": gid}
    fb["view"] = {"ro": view.ro, "hide": view.hide, "symlinks": view.symlinks}
    return [*ns, "--", *_python(view, fb)]


def _run(backend: str, payload: dict[str, Any], timeout: float) -> SandboxResult:
    if backend not in BACKENDS:
        return SandboxResult(
            False,
            "no sandbox on this host, so the code was not run: install bubblewrap "
            "(apt-get install bubblewrap), or util-linux `unshare` with user namespaces",
        )
    # The fallback's mount point for its new root (a tmpfs in the child's namespace only).
    root_dir = tempfile.mkdtemp(prefix="rsi-checker-") if backend == "fallback" else ""
    payload = {**payload, "nonce": secrets.token_hex(16)}
    cfg = {
        "memory": MEMORY_BYTES,
        "nproc": NPROC,
        "cpu": int(timeout) + 2,
        "fsize": FILE_BYTES,
        "disk": DISK_BYTES,
    }
    env = {
        "PATH": "/usr/bin:/bin",
        "HOME": "/tmp",
        "TMPDIR": "/tmp",
        "LANG": "C.UTF-8",
        "OPENBLAS_NUM_THREADS": "1",
        "OMP_NUM_THREADS": "1",
        # Lets tests find leftovers of this parent; the child never reads it.
        "RSI_CHECKER_SANDBOX": str(os.getpid()),
    }
    proc: subprocess.Popen[bytes] | None = None
    try:
        deadline = time.monotonic() + timeout
        proc = subprocess.Popen(
            _command(backend, cfg, root_dir),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,  # only the start-up's errors: the child then closes it
            cwd="/",
            env=env,
            start_new_session=True,
        )
        data = json.dumps(payload).encode()
        threading.Thread(target=_feed, args=(proc, data), daemon=True).start()
        out, timed_out = _read_until(proc, deadline)
        if timed_out:
            return SandboxResult(False, f"timed out after {timeout:g} s", True)
        rc = proc.wait()
        return _interpret(out, payload["nonce"], rc, _stderr_tail(proc))
    except OSError as err:
        return SandboxResult(False, f"the sandbox could not run the code ({err.strerror or err})")
    finally:
        if proc is not None:
            _kill(proc)
        if root_dir:
            with contextlib.suppress(OSError):
                os.rmdir(root_dir)  # stays empty on the host


def _feed(proc: subprocess.Popen[bytes], data: bytes) -> None:
    """Write the payload to the child's stdin (a thread, so a stuck child cannot block us)."""
    assert proc.stdin is not None
    with contextlib.suppress(OSError):
        proc.stdin.write(data)
    with contextlib.suppress(OSError):
        proc.stdin.close()


def _read_until(proc: subprocess.Popen[bytes], deadline: float) -> tuple[bytes, bool]:
    """Read the child's result channel until EOF or the deadline, keeping at most a cap."""
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
            chunk = os.read(proc.stdout.fileno(), 1 << 16)
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
    for pipe in (proc.stdout, proc.stderr):
        if pipe is not None:
            pipe.close()


_NOT_ISOLATED = "the sandbox could not isolate the code, so it was not run: "


def _stderr_tail(proc: subprocess.Popen[bytes]) -> str:
    """The last line the sandbox wrote to stderr before the child closed it (e.g. bwrap's own
    error), read without blocking, or ""."""
    assert proc.stderr is not None
    fd = proc.stderr.fileno()
    os.set_blocking(fd, False)
    try:
        data = os.read(fd, 1 << 14)
    except OSError:
        return ""
    lines = data.decode("utf-8", "replace").strip().splitlines()
    return lines[-1][:200] if lines else ""


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _interpret(out: bytes, nonce: str, rc: int, err: str = "") -> SandboxResult:
    for raw in reversed(out.splitlines()):
        try:
            msg = json.loads(raw, parse_constant=_reject_constant)
        except (ValueError, RecursionError):
            continue
        if not isinstance(msg, dict):
            continue
        if "setup_error" in msg:
            lines = str(msg["setup_error"]).strip().splitlines() or ["unknown error"]
            return SandboxResult(False, _NOT_ISOLATED + lines[-1])
        if msg.get("nonce") != nonce:
            continue
        if isinstance(msg.get("fail"), str):
            return SandboxResult(False, msg["fail"])
        if isinstance(msg.get("results"), list):
            return SandboxResult(True, results=msg["results"])
        return SandboxResult(msg.get("ok") is True, str(msg.get("reason", "")))
    if rc < 0:
        name = signal.Signals(-rc).name if -rc in signal.Signals._value2member_map_ else -rc
        return SandboxResult(False, f"the code was killed by {name} (a resource limit?)")
    if err.startswith("bwrap: "):  # bubblewrap could not build the view: nothing ran
        return SandboxResult(False, _NOT_ISOLATED + err)
    said = f"; it said: {err}" if err else ""
    return SandboxResult(False, f"the code exited without a verdict (exit code {rc}){said}")


_PROBE_CODE = """\
import ctypes, os, socket

def f(secret, sock, outside):
    seen = []
    try:
        seen.append(open(secret).read())
    except OSError:
        pass
    try:
        s = socket.socket(socket.AF_UNIX)
        s.connect(sock)
        seen.append("unix socket")
    except OSError:
        pass
    try:
        socket.create_connection(("127.0.0.1", 9), timeout=1)
        seen.append("network")
    except OSError:
        pass
    try:
        open(outside, "w").close()
        seen.append("wrote outside")
    except OSError:
        pass
    if ctypes.CDLL(None).unshare(0x10000000 | 0x20000) == 0:
        seen.append("unshare")
    return seen
"""


def probe(backend: str) -> list[str]:
    """What of the host `backend` lets code see here ([] when isolated), or why it cannot run.

    Plants a 0644 file and a listening unix socket in a world-traversable, world-writable
    directory and asks code in the sandbox to read, connect, reach the network, write there and
    create user and mount namespaces.
    """
    where = tempfile.mkdtemp(prefix="rsi-checker-probe-")
    server = socket.socket(socket.AF_UNIX)
    try:
        os.chmod(where, 0o777)  # anyone may enter and write: only the sandbox's view may stop it
        secret = os.path.join(where, "secret")
        Path(secret).write_text("host file")
        os.chmod(secret, 0o644)
        sock = os.path.join(where, "sock")
        server.bind(sock)
        os.chmod(sock, 0o777)
        server.listen(1)
        call = {"args": [secret, sock, os.path.join(where, "x")], "kwargs": {}}
        payload = {"code": _PROBE_CODE, "entry_point": "f", "calls": [call]}
        res = _run(backend, payload, 20.0)
        if not res.ok or not res.results:
            return [res.reason]
        return list(res.results[0].get("value", [res.results[0].get("error")]))
    finally:
        server.close()
        shutil.rmtree(where, ignore_errors=True)


def sandbox_backend() -> str:
    """The backend judging code on this host: `"bwrap"`, `"fallback"` or `"none"` (probed once;
    `"none"` refuses to run any code)."""
    global _backend
    with _backend_lock:
        if _backend is None:
            _backend = "none"
            if sys.platform == "linux":
                for name, tool in (("bwrap", "bwrap"), ("fallback", "unshare")):
                    if shutil.which(tool) and probe(name) == []:
                        _backend = name
                        break
        return _backend


def run_calls(
    code: str, entry_point: str, calls: list[dict[str, Any]], timeout: float = DEFAULT_TIMEOUT
) -> SandboxResult:
    """Run `code`, then call `entry_point(*args, **kwargs)` for each of `calls`
    (`[{"args": [...], "kwargs": {...}}]`, plain JSON) in a sandboxed child; never raises.

    The code runs with `__name__ == "__solution__"` (`if __name__ == "__main__":` blocks do not
    run). The child returns only what each call returned, as plain JSON (exact dict with string
    keys, list, str, int, float, bool, None: a tuple, a set or any subclass is an error for that
    call), or the exception it raised; the caller decides the verdict.
    """
    payload = {"code": code, "entry_point": entry_point, "calls": calls}
    return _run(sandbox_backend(), payload, timeout)


def run_tests(
    code: str, tests: list[str], entry_point: str, timeout: float = DEFAULT_TIMEOUT
) -> SandboxResult:
    """Run `code`, then each free-form test, in a sandboxed child; never raises.

    Weaker than `run_calls`: the verdict is decided inside the untrusted process, so code that
    tampers with its interpreter (an object equal to everything, patched builtins) can pass.
    Each test is executed in the code's namespace; a test that defines a new `check` function
    has it called with the entry point (HumanEval style). The first failing test ends the run.
    """
    payload = {"code": code, "entry_point": entry_point, "tests": tests}
    return _run(sandbox_backend(), payload, timeout)
