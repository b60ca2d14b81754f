"""`code_tests`: the response's code runs in a sandbox that sees nothing of the host, a wrong
answer never passes the `cases` form, and hostile code leaves the host unharmed (spec/checks.md,
EV4 and its 1.1 amendment). Every sandbox test runs against both backends, bwrap and fallback."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import rsi_hub.checker.sandbox as sandbox
from rsi_hub.checker import CheckError, check, sandbox_backend
from rsi_hub.checker.sandbox_view import RuntimeView, runtime_view
from rsi_hub.suites import load_suite, reference_response

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="the sandbox needs Linux")

REPO = Path(__file__).resolve().parents[1]
ADD_TEST = "assert add(1, 2) == 3"
ADD_CASES = [{"args": [1, 2], "expect": 3}, {"args": [], "kwargs": {"a": 2, "b": 5}, "expect": 7}]
RIGHT = "def add(a=0, b=0):\n    return a + b\n"


@pytest.fixture(params=sandbox.BACKENDS)
def backend(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Run the test against one backend (both must work wherever the suite runs)."""
    monkeypatch.setattr(sandbox, "_backend", request.param)
    return request.param


def judge(code: str, tests: object = ADD_TEST, timeout: float = 5) -> tuple[bool, str]:
    c = {"type": "code_tests", "entry_point": "add", "tests": tests, "timeout": timeout}
    r = check(code, [c]).results[0]
    return r.passed, r.reason


def judge_cases(code: str, cases: list | None = None, timeout: float = 5) -> tuple[bool, str]:
    c = {"type": "code_tests", "entry_point": "add", "cases": cases or ADD_CASES}
    r = check(code, [{**c, "timeout": timeout}]).results[0]
    return r.passed, r.reason


def leftovers() -> list[int]:
    """PIDs of processes started by this test process's sandboxes that are still alive."""
    marker = f"RSI_CHECKER_SANDBOX={os.getpid()}".encode()
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            env = (entry / "environ").read_bytes()
        except OSError:
            continue
        if marker in env.split(b"\0"):
            found.append(int(entry.name))
    return found


def wait_no_leftovers(seconds: float = 5.0) -> list[int]:
    deadline = time.monotonic() + seconds
    while (alive := leftovers()) and time.monotonic() < deadline:
        time.sleep(0.05)
    return alive


@pytest.fixture
def open_dir() -> Iterator[Path]:
    """A directory anyone may enter and write, under the host's /tmp: only the sandbox's view of
    the host can keep code away from what is in it."""
    path = Path(tempfile.mkdtemp(prefix="rsi-sandbox-test-"))
    path.chmod(0o777)
    yield path
    shutil.rmtree(path, ignore_errors=True)


def test_backend_is_bwrap_where_installed() -> None:
    assert sandbox_backend() == ("bwrap" if shutil.which("bwrap") else "fallback")
    for name in sandbox.BACKENDS:
        assert sandbox.probe(name) == [], name


# --- the cases form: the verdict is decided outside the untrusted process ---------------------

# Each of these defines a wrong `add` (or none) and tampers with the interpreter it runs in.
TAMPERS = {
    "always-equal object": "class E:\n    def __eq__(self, other):\n        return True\n"
    "    __hash__ = object.__hash__\n"
    "def add(*a, **k):\n    return E()\n",
    "int subclass equal to everything": "class I(int):\n    def __eq__(self, other):\n"
    "        return True\n    __hash__ = int.__hash__\n"
    "def add(*a, **k):\n    return I(0)\n",
    "patched exec": "import builtins\nbuiltins.exec = lambda *a, **k: None\n"
    "def add(*a, **k):\n    return 0\n",
    "patched compile and json": "import builtins, json\nbuiltins.compile = lambda *a, **k: None\n"
    "json.dumps = lambda *a, **k: '{\"ok\": true}'\n"
    "def add(*a, **k):\n    return 0\n",
    "sys.exit(0) at import": "import sys\nsys.exit(0)\n",
    "sys.exit(0) in the call": "def add(*a, **k):\n    import sys\n    sys.exit(0)\n",
    "os._exit(0) at import": "import os\nos._exit(0)\n",
    "os._exit(0) in the call": "def add(*a, **k):\n    import os\n    os._exit(0)\n",
    "printed success markers": "print('ok')\nprint('PASSED')\nprint('All tests passed')\n"
    "def add(*a, **k):\n    print('ok')\n    return 0\n",
    "forged result line on stdout": "import sys\n"
    'line = \'{"ok": true, "reason": "", "results": [{"value": 3}, {"value": 7}]}\'\n'
    "print(line)\nsys.__stdout__.write(line + '\\n')\n"
    "def add(*a, **k):\n    return 0\n",
    "huge stdout": "import sys\nfor _ in range(200):\n    sys.stdout.write('x' * 1000000)\n"
    "def add(*a, **k):\n    print('y' * 10000000)\n    return 0\n",
    # The nonce, found through gc, on every open descriptor: a verdict in each shape.
    "nonce from gc": "import gc, json, os\n"
    "nonce = next(o['nonce'] for o in gc.get_objects() if type(o) is dict and 'nonce' in o)\n"
    "for msg in ({'nonce': nonce, 'ok': True, 'reason': ''}, {'nonce': nonce, 'results': []}):\n"
    "    for fd in map(int, os.listdir('/proc/self/fd')):\n"
    "        try:\n            os.write(fd, (json.dumps(msg) + '\\n').encode())\n"
    "        except OSError:\n            pass\n"
    "os._exit(0)\n",
}


@pytest.mark.parametrize("name", sorted(TAMPERS))
def test_no_tamper_passes_a_wrong_answer(backend: str, name: str) -> None:
    passed, reason = judge_cases(TAMPERS[name], timeout=10)
    assert passed is False, reason
    assert reason.startswith("expected the tests to pass; ")


def test_the_same_tamper_passes_the_weaker_free_form_tests(backend: str) -> None:
    # Documented weakness of `tests` (see checks_code): why EV4 uses `cases`.
    assert judge(TAMPERS["always-equal object"]) == (True, "")
    assert judge(TAMPERS["nonce from gc"]) == (True, "")


@pytest.mark.parametrize(
    ("code", "cases", "passed", "reason"),
    [
        (RIGHT, ADD_CASES, True, ""),
        ("```python\n" + RIGHT + "```", ADD_CASES, True, ""),
        (
            "def add(a=0, b=0):\n    return a - b\n",
            ADD_CASES,
            False,
            "expected the tests to pass; case 1 of 2: add(1, 2) returned -1, expected 3",
        ),
        (
            "def add(a=0, b=0):\n    return float(a + b)\n",
            ADD_CASES,
            False,
            "expected the tests to pass; case 1 of 2: add(1, 2) returned 3.0, expected 3",
        ),
        (
            "def add(a=0, b=0):\n    return a + b == 3\n",
            [{"args": [1, 2], "expect": 1}],
            False,
            "expected the tests to pass; case 1 of 1: add(1, 2) returned true, expected 1",
        ),
        (
            "def add(x, y):\n    return x + y\n",
            ADD_CASES,
            False,
            "expected the tests to pass; case 2 of 2: add(a=2, b=5) raised TypeError: "
            "add() got an unexpected keyword argument 'a'",
        ),
        (
            "def add(a=0, b=0):\n    return (a, b)\n",
            [{"args": [1, 2], "expect": [1, 2]}],
            False,
            "expected the tests to pass; case 1 of 1: add(1, 2) returned an object of type "
            "tuple, which is not plain JSON",
        ),
        (
            "def add(a=0, b=0):\n    return a / 0\n",
            ADD_CASES,
            False,
            "expected the tests to pass; case 1 of 2: add(1, 2) raised ZeroDivisionError: "
            "division by zero",
        ),
        (
            "def add(a=0, b=0):\n    return {'sum': a + b, 'parts': [a, b, None, True]}\n",
            [{"args": [1, 2], "expect": {"parts": [1, 2, None, True], "sum": 3}}],
            True,
            "",
        ),
        (
            "def plus(a, b):\n    return a + b\n",
            ADD_CASES,
            False,
            "expected the tests to pass; the code defines no function 'add'",
        ),
        (
            "def add(a, b)\n    return a + b\n",
            ADD_CASES,
            False,
            "expected the tests to pass; the code does not compile: expected ':' (line 1)",
        ),
    ],
)
def test_cases_verdicts(
    backend: str, code: str, cases: list, passed: bool, reason: str | None
) -> None:
    got_passed, got_reason = judge_cases(code, cases)
    assert got_passed is passed, got_reason
    if reason is not None:
        assert got_reason == reason


def test_the_expected_values_never_reach_the_tested_code(backend: str) -> None:
    # All the child is given: the code, the entry point, the calls (no `expect`) and a nonce.
    code = (
        "import gc\n"
        "def add(*a, **k):\n"
        "    return [sorted(o) for o in gc.get_objects() if type(o) is dict and 'nonce' in o]\n"
    )
    expect = [["calls", "code", "entry_point", "nonce"]]
    assert judge_cases(code, [{"args": [1, 2], "expect": expect}]) == (True, "")


def test_the_call_gets_fresh_arguments_and_kwargs(backend: str) -> None:
    code = "def add(xs, scale=1):\n    xs.append(0)\n    return [x * scale for x in xs]\n"
    cases = [
        {"args": [[1, 2]], "kwargs": {"scale": 2}, "expect": [2, 4, 0]},
        {"args": [[1, 2]], "expect": [1, 2, 0]},
    ]
    assert judge_cases(code, cases) == (True, "")


@pytest.mark.parametrize(
    "bad",
    [
        [],
        [{"args": [1]}],
        [{"args": 1, "expect": 1}],
        [{"args": [], "kwargs": {"not an identifier": 1}, "expect": 1}],
        [{"args": [float("nan")], "expect": 1}],
        [{"args": [(1, 2)], "expect": 1}],
        [{"expect": 1, "extra": 2}],
    ],
)
def test_malformed_cases_are_check_errors(bad: list) -> None:
    with pytest.raises(CheckError, match="parameter 'cases' must be a non-empty list of cases"):
        check(RIGHT, [{"type": "code_tests", "entry_point": "add", "cases": bad}])


def test_exactly_one_of_cases_and_tests() -> None:
    for c in ({}, {"tests": ADD_TEST, "cases": ADD_CASES}):
        with pytest.raises(CheckError, match="give exactly one of 'cases'"):
            check(RIGHT, [{"type": "code_tests", "entry_point": "add", **c}])


# --- the free-form tests form (weaker, still sandboxed) ---------------------------------------


@pytest.mark.parametrize(
    ("code", "tests", "passed", "reason"),
    [
        ("```python\ndef add(a, b):\n    return a + b\n```", ADD_TEST, True, ""),
        (
            "Here:\n```python\ndef add(a, b):\n    return a + b\n```\nand a demo:\n```\n"
            "print(add(1, 2))\n```",
            ADD_TEST,
            True,
            "",
        ),
        (
            "```python\ndef add(a, b):\n    return a + b\n```",
            "def check(candidate):\n    assert candidate(2, 2) == 4\n",
            True,
            "",
        ),
        (
            "def add(a, b):\n    return 3",
            ["assert add(1, 2) == 3", "assert add(2, 2) == 4"],
            False,
            "expected the tests to pass; test 2 of 2 failed at line 1: assert add(2, 2) == 4 "
            "(AssertionError)",
        ),
        (
            "I cannot write code.\n```js\nfunction add(a,b){return a+b}\n```",
            ADD_TEST,
            False,
            "expected Python code, found none",
        ),
        ("", ADD_TEST, False, "expected Python code, found none"),
        (
            "import sys\nsys.exit(0)",
            ADD_TEST,
            False,
            "expected the tests to pass; the code raised SystemExit: 0",
        ),
        (
            "import os\nos._exit(0)",
            ADD_TEST,
            False,
            "expected the tests to pass; the code exited without a verdict (exit code 0)",
        ),
        (
            'print(\'{"ok": true, "reason": ""}\')\ndef add(a, b):\n    return 0',
            ADD_TEST,
            False,
            "expected the tests to pass; the test failed at line 1: assert add(1, 2) == 3 "
            "(AssertionError)",
        ),
        (
            "def add(a, b):\n    return a + b\nif __name__ == '__main__':\n    raise SystemExit(1)",
            ADD_TEST,
            True,
            "",
        ),
        (
            "open('f.txt', 'w').write('x')\ndef add(a, b):\n    return a + b",
            "import os\nassert os.path.exists('f.txt') and os.getcwd() == '/tmp'\n" + ADD_TEST,
            True,
            "",
        ),
    ],
)
def test_free_form_verdicts(
    backend: str, code: str, tests: object, passed: bool, reason: str
) -> None:
    assert judge(code, tests) == (passed, reason)


# --- nothing of the host ---------------------------------------------------------------------


def test_a_host_unix_socket_is_unreachable(backend: str, open_dir: Path) -> None:
    path = open_dir / "host.sock"
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(path))
    path.chmod(0o777)
    server.listen(1)
    server.settimeout(1.0)
    try:
        code = (
            "import socket\ns = socket.socket(socket.AF_UNIX)\n"
            f"s.connect({str(path)!r})\ns.sendall(b'leak')\n" + RIGHT
        )
        passed, reason = judge(code)
        assert (passed, reason) == (
            False,
            "expected the tests to pass; the code raised FileNotFoundError: "
            "[Errno 2] No such file or directory",
        )
        with pytest.raises(TimeoutError):
            server.accept()
    finally:
        server.close()


def test_a_0644_host_file_is_not_readable(backend: str, open_dir: Path) -> None:
    secret = open_dir / "secret.txt"
    secret.write_text("HOST-SECRET-7f3a")
    secret.chmod(0o644)
    for path in (secret, REPO / "pyproject.toml"):  # also the test's own working tree
        code = f"def add(a, b):\n    return open({str(path)!r}).read()\n"
        passed, reason = judge(code, "assert add(1, 2) == 3, add(1, 2)")
        assert (passed, reason) == (
            False,
            "expected the tests to pass; the test raised FileNotFoundError: [Errno 2] No such "
            f"file or directory: {str(path)!r}",
        )


def test_only_the_runtime_is_visible(backend: str) -> None:
    view = runtime_view()
    top = {p.split("/")[1] for p in view.ro} | {link[1:] for link, _ in view.symlinks}
    code = (
        "import os\n"
        "def add(hidden):\n"
        "    return [sorted(os.listdir('/')), os.listdir('/tmp')] + [os.listdir(p) for p in hidden]\n"
    )
    expect = [sorted(top | {"dev", "proc", "tmp"}), []] + [[] for _ in view.hide]
    assert judge_cases(code, [{"args": [view.hide], "expect": expect}]) == (True, "")


def test_no_new_namespaces(backend: str) -> None:
    code = (
        "import ctypes\nlibc = ctypes.CDLL(None, use_errno=True)\n"
        "RC = [libc.unshare(flags) for flags in (0x10000000 | 0x20000, 0x10000000, 0x20000)]\n"
        + RIGHT
    )
    assert judge(code, "assert RC == [-1, -1, -1], RC\n" + ADD_TEST) == (True, "")


def test_write_to_a_world_writable_host_dir_fails(backend: str, open_dir: Path) -> None:
    target = open_dir / "outside.txt"
    code = RIGHT + f"try:\n    open({str(target)!r}, 'w').write('x')\nexcept OSError:\n    pass\n"
    assert judge(code) == (True, "")  # the code swallowed the error ...
    assert not target.exists()  # ... and nothing was written


def test_no_network_to_host_loopback(backend: str) -> None:
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    server.settimeout(0.5)
    port = server.getsockname()[1]
    try:
        code = f"import socket\nsocket.create_connection(('127.0.0.1', {port}), timeout=2)\n"
        passed, reason = judge(code + RIGHT)
        assert not passed
        assert "OSError" in reason or "ConnectionRefusedError" in reason
        with pytest.raises(TimeoutError):
            server.accept()
    finally:
        server.close()


# --- limits ----------------------------------------------------------------------------------


def test_infinite_loop_times_out(backend: str) -> None:
    start = time.monotonic()
    passed, reason = judge_cases("def add(a, b):\n    while True:\n        pass", timeout=1)
    assert (passed, reason) == (False, "expected the tests to pass; timed out after 1 s")
    assert time.monotonic() - start < 5
    assert wait_no_leftovers() == []


def test_fork_bomb_is_contained(backend: str) -> None:
    code = RIGHT + "import os\nwhile True:\n    try:\n        os.fork()\n    except OSError:\n"
    passed, reason = judge(code + "        pass\n", timeout=2)
    assert not passed
    assert "timed out" in reason or "killed" in reason
    assert wait_no_leftovers() == []
    assert subprocess.run(["true"], check=False).returncode == 0  # the host can still fork


def test_ten_gigabyte_allocation_fails(backend: str) -> None:
    start = time.monotonic()
    passed, reason = judge("x = bytearray(10 * 1024 ** 3)\n" + RIGHT)
    assert (passed, reason) == (False, "expected the tests to pass; the code raised MemoryError")
    assert time.monotonic() - start < 5


def test_parallel_runs(backend: str) -> None:
    results: list[tuple[bool, str]] = []
    threads = [
        threading.Thread(target=lambda: results.append(judge_cases(RIGHT))) for _ in range(4)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == [(True, "")] * 4


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.one_of(
        st.text(max_size=200),
        st.text(alphabet="def add(a, b):\n    return a+b\"'`()[]{}#\\ ", max_size=200),
    )
)
def test_any_text_never_raises(response: str) -> None:
    c = {"type": "code_tests", "entry_point": "add", "cases": ADD_CASES, "timeout": 3}
    assert check(response, [c]).results[0].passed in (True, False)


# --- refusing rather than leaking ------------------------------------------------------------


def test_no_backend_refuses_to_run_code(monkeypatch: pytest.MonkeyPatch, open_dir: Path) -> None:
    monkeypatch.setattr(sandbox, "_backend", None)
    monkeypatch.setattr(sandbox.shutil, "which", lambda name: None)
    assert sandbox_backend() == "none"
    target = open_dir / "ran.txt"
    code = f"open({str(target)!r}, 'w').close()\n" + RIGHT
    assert judge_cases(code) == (
        False,
        "expected the tests to pass; no sandbox on this host, so the code was not run: install "
        "bubblewrap (apt-get install bubblewrap), or util-linux `unshare` with user namespaces",
    )
    assert not target.exists()


def test_a_view_that_cannot_be_built_refuses_to_run(
    backend: str, monkeypatch: pytest.MonkeyPatch, open_dir: Path
) -> None:
    # A view the backend cannot build (a path that is not there): it must stop before the code
    # runs with the host in sight, and the probe must then reject the backend.
    view = runtime_view()
    broken = RuntimeView(view.python, [*view.ro, "/nonexistent-rsi-runtime"], view.hide, [])
    monkeypatch.setattr(sandbox, "runtime_view", lambda: broken)
    target = open_dir / "ran.txt"
    passed, reason = judge_cases(f"open({str(target)!r}, 'w').close()\n" + RIGHT)
    assert not passed
    said = {"bwrap": "bwrap: Can't find source path", "fallback": "FileNotFoundError"}[backend]
    assert reason.startswith(
        "expected the tests to pass; the sandbox could not isolate the code, so it was not run: "
        + said
    ), reason
    assert "/nonexistent-rsi-runtime" in reason
    assert not target.exists()
    assert sandbox.probe(backend) != []


# --- as an unprivileged user -------------------------------------------------------------------

UNPRIVILEGED = r"""
import json, os, sys
import rsi_hub.checker.sandbox as sandbox
from rsi_hub.checker import check
secret = sys.argv[1]
out = {"uid": os.geteuid()}
for name in sandbox.BACKENDS:
    sandbox._backend = name
    def one(code):
        c = {"type": "code_tests", "entry_point": "add", "cases": [{"args": [1, 2], "expect": 3}]}
        return check(code, [c]).results[0].reason
    out[name] = {
        "probe": sandbox.probe(name),
        "right": one("def add(a, b):\n    return a + b\n"),
        "wrong": one("def add(a, b):\n    return a - b\n"),
        "file": one(f"def add(a, b):\n    return open({secret!r}).read()\n"),
    }
print(json.dumps(out))
"""

# Run as root: a private mount namespace where the interpreter and this checkout are reachable
# for `nobody` (as on a host where Python is installed for everyone), then `nobody`.
AS_NOBODY = r"""
import os, sys, tempfile
from rsi_hub.checker._sandbox_child import _mount, expose
stage = tempfile.mkdtemp()
_mount("tmpfs", stage, "tmpfs", 0, "size=1m")
expose(sys.argv[1].split(":"), 65534, stage + "/s")
os.setgroups([]); os.setgid(65534); os.setuid(65534)
os.execv(sys.executable, [sys.executable, "-c", sys.argv[2], *sys.argv[3:]])
"""


def test_unprivileged_user(open_dir: Path) -> None:
    secret = open_dir / "secret.txt"
    secret.write_text("HOST-SECRET-7f3a")
    secret.chmod(0o644)
    argv = [sys.executable, "-c", UNPRIVILEGED, str(secret)]
    if os.geteuid() == 0:
        reach = f"{sys.base_prefix}:{REPO}"
        argv = ["unshare", "--mount", "--", sys.executable, "-c", AS_NOBODY, reach, *argv[2:]]
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    done = subprocess.run(argv, capture_output=True, text=True, env=env, cwd="/", timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    out = json.loads(done.stdout)
    assert out["uid"] != 0
    fnf = "[Errno 2] No such file or directory"
    for name in sandbox.BACKENDS:
        assert out[name] == {
            "probe": [],
            "right": "",
            "wrong": "expected the tests to pass; case 1 of 1: add(1, 2) returned -1, expected 3",
            "file": "expected the tests to pass; case 1 of 1: add(1, 2) raised "
            f"FileNotFoundError: {fnf}: {str(secret)!r}",
        }, name


def test_ev4_code_items_use_cases_and_resist_tampering() -> None:
    rows = [r for r in load_suite("ev4") if r["category"] == "code"]
    assert len(rows) == 7
    for row in rows:
        (c,) = [c for c in row["checks"] if c["type"] == "code_tests"]
        assert "cases" in c and "tests" not in c, row["id"]
        assert check(reference_response(row), [c]).passed, row["id"]
        wrong = "class E:\n    def __eq__(self, other):\n        return True\n" + (
            f"def {c['entry_point']}(*a, **k):\n    return E()\n"
        )
        assert check(wrong, [c]).results[0].reason.endswith("which is not plain JSON"), row["id"]
