"""Bootstrap of the `code_tests` sandbox: runs as `python -I -B _sandbox_child.py CONFIG`.

Standard library only, and no import of rsi_hub: it runs in a fresh interpreter. In namespace
mode it starts as PID 1 of new PID, mount and network namespaces (made by `unshare`, see
`sandbox.py`), still privileged, and in this order:

1. reads the payload (code, tests, entry point, nonce) from the scratch directory and deletes it;
2. mounts a size-capped tmpfs on the scratch directory (the only writable place), makes every
   other mount read-only, and hides directories the unprivileged user could not traverse
   (e.g. a Python installed under a 0700 `/root`) behind a tmpfs that re-exposes only the paths
   Python needs;
3. drops privileges (to `nobody` when started as real root, else all capabilities), sets
   no-new-privileges and the resource limits (address space, processes, CPU, file size, files);
4. points stdin/stdout/stderr at /dev/null and keeps a private descriptor for the result;
5. runs the code, then the tests, and writes one JSON line `{"nonce", "ok", "reason"}`.

Exiting PID 1 ends the PID namespace, so every process the code started dies with it.
"""

import contextlib
import ctypes
import json
import os
import resource
import signal
import sys
import traceback

MS_BIND = 4096
MS_MOVE = 8192
MS_REC = 16384
MS_NOSUID = 2
MS_NODEV = 4
MS_RDONLY = 1
MS_REMOUNT = 32
AT_FDCWD = -100
AT_RECURSIVE = 0x8000
MOUNT_ATTR_RDONLY = 1
SYS_MOUNT_SETATTR = 442  # same number on x86_64 and aarch64
PR_SET_NO_NEW_PRIVS = 38
PR_CAPBSET_DROP = 24
PR_SET_SECUREBITS = 28
# NOROOT, NO_SETUID_FIXUP, KEEP_CAPS and NO_CAP_AMBIENT_RAISE, each with its lock bit.
SECURE_ALL_LOCKED = 0xFF

_libc = ctypes.CDLL(None, use_errno=True)


def _check(rc, what):
    if rc != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"{what}: {os.strerror(err)}")


def _mount(src, target, fstype, flags, data=None):
    _check(
        _libc.mount(
            None if src is None else src.encode(),
            target.encode(),
            None if fstype is None else fstype.encode(),
            ctypes.c_ulong(flags),
            None if data is None else data.encode(),
        ),
        f"mount {target}",
    )


class _MountAttr(ctypes.Structure):
    _fields_ = [
        ("attr_set", ctypes.c_uint64),
        ("attr_clr", ctypes.c_uint64),
        ("propagation", ctypes.c_uint64),
        ("userns_fd", ctypes.c_uint64),
    ]


def _setattr(path, flags, attr_set, attr_clr):
    attr = _MountAttr(attr_set, attr_clr, 0, 0)
    rc = _libc.syscall(
        ctypes.c_long(SYS_MOUNT_SETATTR),
        ctypes.c_int(AT_FDCWD),
        path.encode(),
        ctypes.c_uint(flags),
        ctypes.byref(attr),
        ctypes.c_size_t(ctypes.sizeof(attr)),
    )
    _check(rc, f"mount_setattr {path}")


def _all_readonly(scratch):
    """Every mount read-only except the scratch tmpfs."""
    try:
        _setattr("/", AT_RECURSIVE, MOUNT_ATTR_RDONLY, 0)
    except OSError:
        # Kernels before 5.12 have no mount_setattr: remount each mount point, deepest first.
        with open("/proc/self/mountinfo") as f:
            points = [line.split()[4] for line in f]
        for mp in sorted(set(points), key=len, reverse=True):
            if mp == scratch:
                continue
            try:
                _mount(None, mp, None, MS_BIND | MS_REMOUNT | MS_RDONLY)
            except OSError:
                if mp == "/":
                    raise
        return
    _setattr(scratch, 0, 0, MOUNT_ATTR_RDONLY)


def _blocked_dirs(paths, uid):
    """Directories on the way to `paths` that `uid` (not their owner) cannot traverse."""
    blocked = {}
    for path in paths:
        parts = os.path.abspath(path).split("/")[1:]
        for i in range(1, len(parts)):
            d = "/" + "/".join(parts[:i])
            try:
                st = os.stat(d)
            except OSError:
                break
            if st.st_uid != uid and not st.st_mode & 0o001:
                blocked.setdefault(d, set()).add(parts[i])
    return blocked


def _expose(paths, uid, stage):
    """Cover each blocked directory with a tmpfs that holds bind mounts of only its needed
    children, so `uid` can reach the Python installation and nothing else there."""
    for d, children in sorted(_blocked_dirs(paths, uid).items(), key=lambda kv: len(kv[0])):
        os.mkdir(stage, 0o755)
        _mount("tmpfs", stage, "tmpfs", MS_NOSUID | MS_NODEV, "size=1m,mode=0755")
        for child in sorted(children):
            src = os.path.join(d, child)
            dst = os.path.join(stage, child)
            if os.path.isdir(src):
                os.mkdir(dst)
            else:
                open(dst, "w").close()
            _mount(src, dst, None, MS_BIND | MS_REC)
        _mount(stage, d, None, MS_MOVE)
        os.rmdir(stage)


def _drop_capabilities():
    """Drop every capability for good (used when uid 0 is the only uid of a user namespace)."""
    for cap in range(64):
        _libc.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0)
    _check(_libc.prctl(PR_SET_SECUREBITS, SECURE_ALL_LOCKED, 0, 0, 0), "securebits")

    class Header(ctypes.Structure):
        _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]

    class Data(ctypes.Structure):
        _fields_ = [
            ("effective", ctypes.c_uint32),
            ("permitted", ctypes.c_uint32),
            ("inheritable", ctypes.c_uint32),
        ]

    header = Header(0x20080522, 0)
    data = (Data * 2)()
    _check(_libc.capset(ctypes.byref(header), ctypes.byref(data)), "capset")


def _no_network():
    """Best-effort network block for the fallback mode (no network namespace)."""
    import socket

    def refuse(*args, **kwargs):
        raise OSError("network access is disabled in the checker sandbox")

    for name in ("socket", "create_connection", "create_server", "socketpair", "fromfd"):
        setattr(socket, name, refuse)
    import _socket

    _socket.socket = refuse


_COMMON_MODULES = [
    "abc",
    "array",
    "bisect",
    "collections",
    "copy",
    "dataclasses",
    "datetime",
    "decimal",
    "enum",
    "fractions",
    "functools",
    "hashlib",
    "heapq",
    "itertools",
    "json",
    "math",
    "operator",
    "random",
    "re",
    "statistics",
    "string",
    "typing",
    "unicodedata",
]


def _setup(cfg):
    scratch = cfg["scratch"]
    payload_path = os.path.join(scratch, ".payload.json")
    with open(payload_path, encoding="utf-8") as f:
        payload = json.load(f)
    os.unlink(payload_path)
    uid, gid = cfg["uid"], cfg["gid"]
    if cfg["mode"] == "namespace":
        owner = f",uid={uid},gid={gid}" if uid is not None else ""
        _mount(
            "tmpfs", scratch, "tmpfs", MS_NOSUID | MS_NODEV, f"size={cfg['disk']},mode=0700{owner}"
        )
        if uid is not None:
            _expose(cfg["expose"], uid, os.path.join(scratch, ".stage"))
        _all_readonly(scratch)
    elif uid is not None:
        # Fallback as root: the Python installation may be unreadable for `nobody`, so load the
        # modules test code usually needs before dropping privileges.
        for name in _COMMON_MODULES:
            with contextlib.suppress(ImportError):
                __import__(name)
    if cfg["mode"] != "namespace":
        _no_network()  # before dropping privileges: `socket` may be unreadable afterwards
    os.chdir(scratch)
    if uid is not None:
        os.setgroups([])
        os.setgid(gid)
        os.setuid(uid)
    elif cfg["mode"] == "namespace":
        _drop_capabilities()
    _libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # an over-large file raises, not kills
    for limit, value in (
        (resource.RLIMIT_AS, cfg["memory"]),
        (resource.RLIMIT_NPROC, cfg["nproc"]),
        (resource.RLIMIT_CPU, cfg["cpu"]),
        (resource.RLIMIT_FSIZE, cfg["fsize"]),
        (resource.RLIMIT_NOFILE, 256),
        (resource.RLIMIT_CORE, 0),
    ):
        resource.setrlimit(limit, (value, value))
    return payload


def _describe(err):
    text = f"{type(err).__name__}: {err}" if str(err) else type(err).__name__
    return text if len(text) <= 300 else text[:297] + "..."


def _test_line(err, test, i):
    """` at line K: <source>` for the innermost frame of test `i`, or ""."""
    lineno = None
    tb = err.__traceback__
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == f"<test {i}>":
            lineno = tb.tb_lineno
        tb = tb.tb_next
    lines = test.splitlines()
    if lineno is None or not 0 < lineno <= len(lines):
        return ""
    src = lines[lineno - 1].strip()
    return f" at line {lineno}: {src[:120]}"


def _run(payload):
    """(ok, reason) for the code and tests of `payload`."""
    name = payload["entry_point"]
    ns = {"__name__": "__solution__", "__builtins__": __builtins__}
    try:
        code = compile(payload["code"], "<response>", "exec")
    except SyntaxError as err:
        return False, f"the code does not compile: {err.msg} (line {err.lineno})"
    except (ValueError, MemoryError, RecursionError) as err:
        return False, f"the code does not compile: {_describe(err)}"
    try:
        exec(code, ns)
    except BaseException as err:  # the code is untrusted: SystemExit included
        return False, f"the code raised {_describe(err)}"
    if not callable(ns.get(name)):
        return False, f"the code defines no function {name!r}"
    tests = payload["tests"]
    for i, test in enumerate(tests, 1):
        where = f"test {i} of {len(tests)}" if len(tests) > 1 else "the test"
        before = ns.get("check")
        try:
            exec(compile(test, f"<test {i}>", "exec"), ns)
            checker = ns.get("check")
            if checker is not before and callable(checker):
                checker(ns[name])  # HumanEval style: tests define check(candidate)
        except AssertionError as err:
            detail = f": {err}" if str(err) else ""
            return False, f"{where} failed{_test_line(err, test, i)} (AssertionError{detail})"
        except BaseException as err:
            return False, f"{where} raised {_describe(err)}"
    return True, ""


def main():
    cfg = json.loads(sys.argv[1])
    result_fd = os.dup(1)
    os.set_inheritable(result_fd, False)
    nonce = ""
    try:
        payload = _setup(cfg)
        nonce = payload["nonce"]
    except BaseException:
        msg = {"setup_error": traceback.format_exc(limit=3)[-2000:]}
        os.write(result_fd, (json.dumps(msg) + "\n").encode())
        os._exit(3)
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    try:
        ok, reason = _run(payload)
    except BaseException as err:  # e.g. MemoryError while reporting
        ok, reason = False, f"the run failed: {type(err).__name__}"
    line = json.dumps({"nonce": nonce, "ok": ok, "reason": reason}) + "\n"
    try:
        os.write(result_fd, line.encode())
    finally:
        os._exit(0)


if __name__ == "__main__":
    main()
