"""Bootstrap of the `code_tests` sandbox: runs as `python -I -S -B -c <this source> CONFIG`.

Standard library only, and no import of rsi_hub: inside the sandbox the package is not visible,
so the parent passes this file's source on the command line. The payload (code, entry point,
the calls or the tests, a nonce) comes on stdin. `CONFIG["stage"]` says where it runs:

- `"bwrap"`: inside bubblewrap, which already built the view of the host (the Python runtime
  read-only, a tmpfs on /tmp, no network, no further namespaces). Sets the limits and runs.
- `"prestage"`: as real root, before bubblewrap. A private mount namespace where the Python
  installation is traversable for `nobody` (a tmpfs over each directory `nobody` cannot enter,
  re-exposing only the needed paths), then `nobody`, then exec bubblewrap: the code must run
  under an unprivileged host uid, or `RLIMIT_NPROC` would not bound a fork bomb.
- `"fallback"`: PID 1 of new PID, mount and network namespaces made by util-linux `unshare`,
  still privileged. Builds a new root on a tmpfs holding only the runtime (read-only binds),
  /dev's harmless nodes, a fresh /proc and a size-capped /tmp, chroots into it (a chrooted
  process may not create user namespaces, and without capabilities no other ones), then drops
  to `nobody` (as root) or drops every capability (in a user namespace). Any step that fails
  aborts with a setup error: the parent then refuses to judge rather than run code that could
  see the host.

Then it points stdin/stdout/stderr at /dev/null, keeps a private descriptor for the result, runs
the code and writes one JSON line: `{"nonce", "results": [...]}` for calls (each
`{"value": plain JSON}` or `{"error": text}`; the parent compares) or `{"nonce", "ok", "reason"}`
for free-form tests (decided in here, so weaker).
"""

import contextlib
import ctypes
import json
import os
import resource
import signal
import sys
import traceback

# Kept before any untrusted code runs: patching builtins cannot reach these.
_exec, _compile, _callable, _type, _isinstance = exec, compile, callable, type, isinstance

MS_RDONLY, MS_NOSUID, MS_NODEV, MS_REMOUNT = 1, 2, 4, 32
MS_BIND, MS_MOVE, MS_REC, MS_PRIVATE = 4096, 8192, 16384, 1 << 18
CLONE_NEWNS = 0x20000
AT_FDCWD, AT_RECURSIVE = -100, 0x8000
MOUNT_ATTR_RDONLY = 1
SYS_MOUNT_SETATTR = 442  # same number on x86_64 and aarch64
PR_SET_NO_NEW_PRIVS, PR_CAPBSET_DROP, PR_SET_SECUREBITS = 38, 24, 28
# NOROOT, NO_SETUID_FIXUP, KEEP_CAPS and NO_CAP_AMBIENT_RAISE, each with its lock bit.
SECURE_ALL_LOCKED = 0xFF
DEV_NODES = ("null", "zero", "full", "random", "urandom")
MAX_DEPTH = 100

_libc = ctypes.CDLL(None, use_errno=True)


def _check(rc, what):
    if rc != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"{what}: {os.strerror(err)}")


def _mount(src, target, fstype, flags, data=None):
    enc = [None if x is None else x.encode() for x in (src, target, fstype, data)]
    _check(_libc.mount(enc[0], enc[1], enc[2], ctypes.c_ulong(flags), enc[3]), f"mount {target}")


class _MountAttr(ctypes.Structure):
    _fields_ = [(n, ctypes.c_uint64) for n in ("attr_set", "attr_clr", "propagation", "userns")]


def _readonly(path):
    """Make the mount at `path` and every mount below it read-only."""
    attr = _MountAttr(MOUNT_ATTR_RDONLY, 0, 0, 0)
    rc = _libc.syscall(
        ctypes.c_long(SYS_MOUNT_SETATTR),
        ctypes.c_int(AT_FDCWD),
        path.encode(),
        ctypes.c_uint(AT_RECURSIVE),
        ctypes.byref(attr),
        ctypes.c_size_t(ctypes.sizeof(attr)),
    )
    _check(rc, f"mount_setattr {path}")


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


def expose(paths, uid, stage):
    """Cover each directory `uid` cannot traverse on the way to `paths` with a tmpfs holding
    bind mounts of only the needed children (needs a private mount namespace and root)."""
    for d, children in sorted(_blocked_dirs(paths, uid).items(), key=lambda kv: len(kv[0])):
        os.mkdir(stage, 0o755)
        _mount("tmpfs", stage, "tmpfs", MS_NOSUID | MS_NODEV, "size=1m,mode=0755")
        for child in sorted(children):
            src, dst = os.path.join(d, child), os.path.join(stage, child)
            if os.path.isdir(src):
                os.mkdir(dst)
            else:
                open(dst, "w").close()
            _mount(src, dst, None, MS_BIND | MS_REC)
        _mount(stage, d, None, MS_MOVE)
        os.rmdir(stage)


def _prestage(cfg):
    """Root only: expose the runtime to `nobody` in a private mount namespace, become `nobody`,
    exec bubblewrap. Never returns."""
    _check(_libc.unshare(CLONE_NEWNS), "unshare")
    _mount(None, "/", None, MS_REC | MS_PRIVATE)
    # A tmpfs on /tmp of this namespace only, to stage on; bubblewrap mounts its own /tmp.
    _mount("tmpfs", "/tmp", "tmpfs", MS_NOSUID | MS_NODEV, "size=1m,mode=0700")
    expose(cfg["expose"], cfg["uid"], "/tmp/stage")
    os.setgroups([])
    os.setgid(cfg["gid"])
    os.setuid(cfg["uid"])
    os.execv(cfg["bwrap"][0], cfg["bwrap"])


def _bind(src, dst, readonly=True):
    if os.path.isdir(src):
        os.makedirs(dst, exist_ok=True)
    else:
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        open(dst, "w").close()
    _mount(src, dst, None, MS_BIND | MS_REC)
    if readonly:
        _readonly(dst)


def _fallback_root(cfg):
    """Build the new root described by `cfg["view"]` under `cfg["root"]` and chroot into it."""
    root, view = cfg["root"], cfg["view"]
    uid, gid = cfg["uid"], cfg["gid"]
    _mount(None, "/", None, MS_REC | MS_PRIVATE)
    _mount("tmpfs", root, "tmpfs", MS_NOSUID | MS_NODEV, "size=1m,mode=0755")
    for path in view["ro"]:
        _bind(path, root + path)
    for path in view["hide"]:
        _mount("tmpfs", root + path, "tmpfs", MS_NOSUID | MS_NODEV, "size=4k,mode=0555")
    for link, target in view["symlinks"]:
        os.symlink(target, root + link)
    os.makedirs(root + "/dev")
    for name in DEV_NODES:
        _bind("/dev/" + name, f"{root}/dev/{name}", readonly=False)
    os.makedirs(root + "/proc")
    _mount("proc", root + "/proc", "proc", MS_NOSUID | MS_NODEV)
    os.makedirs(root + "/tmp")
    owner = f",uid={uid},gid={gid}" if uid is not None else ""
    opts = f"size={cfg['disk']},mode=0700{owner}"
    _mount("tmpfs", root + "/tmp", "tmpfs", MS_NOSUID | MS_NODEV, opts)
    _mount(None, root, None, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV)
    os.chdir(root)
    os.chroot(".")
    os.chdir("/tmp")
    if uid is not None:
        os.setgroups([])
        os.setgid(gid)
        os.setuid(uid)
    else:
        _drop_capabilities()


def _drop_capabilities():
    """Drop every capability for good (used when uid 0 is the only uid of a user namespace)."""
    for cap in range(64):
        _libc.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0)
    _check(_libc.prctl(PR_SET_SECUREBITS, SECURE_ALL_LOCKED, 0, 0, 0), "securebits")

    class Header(ctypes.Structure):
        _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]

    class Data(ctypes.Structure):
        _fields_ = [(n, ctypes.c_uint32) for n in ("effective", "permitted", "inheritable")]

    data = (Data * 2)()
    _check(_libc.capset(ctypes.byref(Header(0x20080522, 0)), ctypes.byref(data)), "capset")


def _limits(cfg):
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


def _read_payload():
    chunks = []
    while chunk := os.read(0, 1 << 20):
        chunks.append(chunk)
    return json.loads(b"".join(chunks))


def _describe(err):
    text = f"{_type(err).__name__}: {err}" if str(err) else _type(err).__name__
    return text if len(text) <= 300 else text[:297] + "..."


def _plain(value, depth=0):
    """None if `value` is plain JSON (exact dict with str keys, list, str, int, float, bool,
    None; finite floats), else what is not: a tuple, a subclass or a NaN is not plain."""
    t = _type(value)
    if depth > MAX_DEPTH:
        return "nested too deeply"
    if value is None or t in (bool, int, str):
        return None
    if t is float:
        return None if value - value == 0 else f"the float {value!r}"
    if t is list:
        for item in value:
            if (problem := _plain(item, depth + 1)) is not None:
                return problem
        return None
    if t is dict:
        for key, item in value.items():
            if _type(key) is not str:
                return f"a dict key of type {_type(key).__name__}"
            if (problem := _plain(item, depth + 1)) is not None:
                return problem
        return None
    return f"an object of type {t.__name__}"


def _call_all(fn, calls):
    """Each call's outcome: {"value": plain JSON} or {"error": text}."""
    out = []
    for call in calls:
        try:
            value = fn(*call["args"], **call["kwargs"])
            problem = _plain(value)
            if problem is None:
                out.append({"value": value})
            else:
                out.append({"error": f"returned {problem}, which is not plain JSON"})
        except BaseException as err:  # untrusted: SystemExit and KeyboardInterrupt included
            out.append({"error": "raised " + _describe(err)})
    return out


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
    return f" at line {lineno}: {lines[lineno - 1].strip()[:120]}"


def _run_tests(ns, name, tests):
    """(ok, reason) for free-form tests, decided in here (weaker: see the parent's docs)."""
    for i, test in enumerate(tests, 1):
        where = f"test {i} of {len(tests)}" if len(tests) > 1 else "the test"
        before = ns.get("check")
        try:
            _exec(_compile(test, f"<test {i}>", "exec"), ns)
            checker = ns.get("check")
            if checker is not before and _callable(checker):
                checker(ns[name])  # HumanEval style: tests define check(candidate)
        except AssertionError as err:
            detail = f": {err}" if str(err) else ""
            return False, f"{where} failed{_test_line(err, test, i)} (AssertionError{detail})"
        except BaseException as err:
            return False, f"{where} raised {_describe(err)}"
    return True, ""


def _run(payload):
    """The result message (without the nonce) for the code and calls or tests of `payload`."""
    name = payload["entry_point"]
    ns = {"__name__": "__solution__", "__builtins__": __builtins__}
    try:
        code = _compile(payload["code"], "<response>", "exec")
    except SyntaxError as err:
        return {"fail": f"the code does not compile: {err.msg} (line {err.lineno})"}
    except (ValueError, MemoryError, RecursionError) as err:
        return {"fail": f"the code does not compile: {_describe(err)}"}
    try:
        _exec(code, ns)
    except BaseException as err:  # the code is untrusted: SystemExit included
        return {"fail": f"the code raised {_describe(err)}"}
    fn = ns.get(name)
    if not _callable(fn):
        return {"fail": f"the code defines no function {name!r}"}
    if payload.get("calls") is not None:
        return {"results": _call_all(fn, payload["calls"])}
    ok, reason = _run_tests(ns, name, payload["tests"])
    return {"ok": ok, "reason": reason}


def main():
    cfg = json.loads(sys.argv[1])
    if cfg["stage"] == "prestage":
        _prestage(cfg)
    result_fd = os.dup(1)
    os.set_inheritable(result_fd, False)
    try:
        payload = _read_payload()
        if cfg["stage"] == "fallback":
            _fallback_root(cfg)
        _limits(cfg)
    except BaseException:
        msg = {"setup_error": traceback.format_exc(limit=3)[-2000:]}
        os.write(result_fd, (json.dumps(msg) + "\n").encode())
        os._exit(3)
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    try:
        msg = _run(payload)
        line = json.dumps({"nonce": payload["nonce"], **msg}, allow_nan=False)
    except BaseException as err:  # e.g. MemoryError while reporting
        line = json.dumps({"nonce": payload["nonce"], "fail": f"the run failed: {_describe(err)}"})
    data = memoryview((line + "\n").encode())
    with contextlib.suppress(OSError):
        while data:
            data = data[os.write(result_fd, data) :]
    os._exit(0)


if __name__ == "__main__":
    main()
