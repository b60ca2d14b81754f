"""`code_tests`: the response's code runs in a sandbox; hostile code fails the check and leaves
the host unharmed (spec/checks.md, EV4; issue 4 item 4)."""

from __future__ import annotations

import os
import socket
import subprocess
import threading
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rsi_hub.checker import check
from rsi_hub.checker.sandbox import sandbox_mode

pytestmark = pytest.mark.skipif(os.name != "posix", reason="the sandbox needs POSIX")

ADD_TEST = "assert add(1, 2) == 3"


def judge(code: str, tests: object = ADD_TEST, timeout: float = 5) -> tuple[bool, str]:
    c = {"type": "code_tests", "entry_point": "add", "tests": tests, "timeout": timeout}
    r = check(code, [c]).results[0]
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


def test_mode_is_known() -> None:
    assert sandbox_mode() in ("namespace", "rlimits")


@pytest.mark.parametrize(
    ("code", "tests", "passed", "reason"),
    [
        ("```python\ndef add(a, b):\n    return a + b\n```", ADD_TEST, True, ""),
        ("def add(a, b):\n    return a + b", ADD_TEST, True, ""),
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
            "def add(a, b):\n    return a - b",
            ADD_TEST,
            False,
            "expected the tests to pass; the test failed at line 1: assert add(1, 2) == 3 "
            "(AssertionError)",
        ),
        (
            "def add(a, b):\n    return 3",
            ["assert add(1, 2) == 3", "assert add(2, 2) == 4"],
            False,
            "expected the tests to pass; test 2 of 2 failed at line 1: assert add(2, 2) == 4 "
            "(AssertionError)",
        ),
        (
            "def add(a, b):\n    return a / 0",
            ADD_TEST,
            False,
            "expected the tests to pass; the test raised ZeroDivisionError: division by zero",
        ),
        (
            "def plus(a, b):\n    return a + b",
            ADD_TEST,
            False,
            "expected the tests to pass; the code defines no function 'add'",
        ),
        (
            "def add(a, b)\n    return a + b",
            ADD_TEST,
            False,
            "expected the tests to pass; the code does not compile: expected ':' (line 1)",
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
        # Printing a fake verdict cannot pass: the verdict carries a nonce on its own channel.
        (
            'print(\'{"ok": true, "reason": ""}\')\ndef add(a, b):\n    return 0',
            ADD_TEST,
            False,
            None,
        ),
        # if __name__ == "__main__" blocks do not run.
        (
            "def add(a, b):\n    return a + b\nif __name__ == '__main__':\n    raise SystemExit(1)",
            ADD_TEST,
            True,
            "",
        ),
        # The scratch directory is the working directory and is writable.
        (
            "import os\nopen('f.txt', 'w').write('x')\ndef add(a, b):\n    return a + b",
            "import os\nassert os.path.exists('f.txt')\n" + ADD_TEST,
            True,
            "",
        ),
    ],
)
def test_code_tests_verdicts(code: str, tests: object, passed: bool, reason: str | None) -> None:
    got_passed, got_reason = judge(code, tests)
    assert got_passed is passed, got_reason
    if reason is not None:
        assert got_reason == reason


def test_infinite_loop_times_out() -> None:
    start = time.monotonic()
    passed, reason = judge("def add(a, b):\n    while True:\n        pass", timeout=1)
    assert not passed
    assert reason == "expected the tests to pass; timed out after 1 s"
    assert time.monotonic() - start < 5
    assert wait_no_leftovers() == []


def test_fork_bomb_is_contained() -> None:
    code = (
        "import os\n"
        "def add(a, b):\n    return a + b\n"
        "while True:\n"
        "    try:\n        os.fork()\n"
        "    except OSError:\n        pass\n"
    )
    passed, reason = judge(code, timeout=2)
    assert not passed
    assert "timed out" in reason or "killed" in reason
    assert wait_no_leftovers() == []
    assert subprocess.run(["true"], check=False).returncode == 0  # the host can still fork


def test_ten_gigabyte_allocation_fails() -> None:
    start = time.monotonic()
    passed, reason = judge("x = bytearray(10 * 1024 ** 3)\ndef add(a, b):\n    return a + b")
    assert not passed
    assert reason == "expected the tests to pass; the code raised MemoryError"
    assert time.monotonic() - start < 5


def test_write_outside_scratch_fails(tmp_path: Path) -> None:
    target = tmp_path / "outside.txt"
    code = f"open({str(target)!r}, 'w').write('pwned')\ndef add(a, b):\n    return a + b"
    passed, reason = judge(code)
    assert not passed
    assert not target.exists()
    assert "OSError" in reason or "PermissionError" in reason


@pytest.mark.skipif(
    sandbox_mode() != "namespace",
    reason="only the namespace sandbox mounts the host read-only; see rsi_hub.checker.sandbox",
)
def test_write_to_world_writable_dir_fails(tmp_path: Path) -> None:
    # A directory anyone may write to: only the read-only view of the host can stop this.
    (tmp_path / "open").mkdir(mode=0o777)
    os.chmod(tmp_path / "open", 0o777)
    os.chmod(tmp_path, 0o755)
    target = tmp_path / "open" / "outside.txt"
    code = (
        "def add(a, b):\n    return a + b\n"
        f"try:\n    open({str(target)!r}, 'w').write('x')\nexcept OSError:\n    pass\n"
    )
    passed, _ = judge(code)
    assert passed  # the code swallowed the error ...
    assert not target.exists()  # ... and nothing was written


@pytest.mark.skipif(sandbox_mode() != "namespace", reason="network namespace only")
def test_no_network_to_host_loopback() -> None:
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    server.settimeout(0.5)
    port = server.getsockname()[1]
    try:
        code = (
            "import socket\n"
            f"socket.create_connection(('127.0.0.1', {port}), timeout=2)\n"
            "def add(a, b):\n    return a + b\n"
        )
        passed, reason = judge(code)
        assert not passed
        assert "OSError" in reason or "ConnectionRefusedError" in reason
        with pytest.raises(TimeoutError):
            server.accept()
    finally:
        server.close()


def test_parallel_runs() -> None:
    results: list[bool] = []

    def one() -> None:
        results.append(judge("def add(a, b):\n    return a + b")[0])

    threads = [threading.Thread(target=one) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == [True] * 4


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.one_of(
        st.text(max_size=200),
        st.text(alphabet="def add(a, b):\n    return a+b\"'`()[]{}#\\ ", max_size=200),
    )
)
def test_any_text_never_raises(response: str) -> None:
    c = {"type": "code_tests", "entry_point": "add", "tests": ADD_TEST, "timeout": 3}
    verdict = check(response, [c])
    assert verdict.results[0].passed in (True, False)


def test_fallback_mode_still_limits(monkeypatch: pytest.MonkeyPatch) -> None:
    # Hosts without namespaces get the rlimits mode: same verdicts for ordinary code, and the
    # time and memory limits still hold (isolation is weaker; see rsi_hub.checker.sandbox).
    import rsi_hub.checker.sandbox as sandbox

    monkeypatch.setattr(sandbox, "_mode", "rlimits")
    assert judge("def add(a, b):\n    return a + b") == (True, "")
    assert judge("def add(a, b):\n    return 0")[0] is False
    passed, reason = judge("x = bytearray(10 * 1024 ** 3)\ndef add(a, b):\n    return a + b")
    assert (passed, reason) == (False, "expected the tests to pass; the code raised MemoryError")
    passed, reason = judge("def add(a, b):\n    while True:\n        pass", timeout=1)
    assert (passed, reason) == (False, "expected the tests to pass; timed out after 1 s")
    passed, reason = judge(
        "import socket\nsocket.create_connection(('127.0.0.1', 9))\ndef add(a, b):\n    return 1"
    )
    assert not passed and "network access is disabled" in reason
    assert wait_no_leftovers() == []
