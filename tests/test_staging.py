"""Output folders are replaced whole: the old one survives until the new one is complete."""

from __future__ import annotations

from pathlib import Path

import pytest

from rsi_hub.errors import OutputDirNotEmptyError
from rsi_hub.staging import aside_dir, fresh_staging_dir, recover_swap, refuse_non_empty, swap_in


def test_refuses_non_empty_without_force(tmp_path: Path) -> None:
    out = tmp_path / "out"
    refuse_non_empty(out, force=False)  # missing is fine
    out.mkdir()
    refuse_non_empty(out, force=False)  # empty is fine
    (out / "old.txt").write_text("old")
    with pytest.raises(OutputDirNotEmptyError, match=r"out is not empty: pass --force"):
        refuse_non_empty(out, force=False)
    refuse_non_empty(out, force=True)


def test_old_output_kept_until_swap(tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    (out / "old.txt").write_text("old")
    staging = fresh_staging_dir(out, "building")
    assert staging == tmp_path / ".out.building"
    (staging / "new.txt").write_text("new")
    # An interruption here leaves the previous output whole.
    assert (out / "old.txt").read_text() == "old"
    swap_in(staging, out)
    assert sorted(p.name for p in out.iterdir()) == ["new.txt"]
    assert not staging.exists()


def test_leftover_staging_is_cleared(tmp_path: Path) -> None:
    out = tmp_path / "out"
    leftover = fresh_staging_dir(out, "prep")
    (leftover / "half.bin").write_bytes(b"\0")
    again = fresh_staging_dir(out, "prep")
    assert again == leftover
    assert list(again.iterdir()) == []


def _tree(folder: Path) -> dict[str, str]:
    return {p.name: p.read_text() for p in folder.iterdir()}


def test_recover_puts_back_an_output_left_aside(tmp_path: Path) -> None:
    out = tmp_path / "out"
    aside = aside_dir(out)
    aside.mkdir()
    (aside / "old.txt").write_text("old")
    # Killed between the two renames: only the previous output, aside, remains.
    recover_swap(out)
    assert _tree(out) == {"old.txt": "old"} and not aside.exists()
    # Killed while deleting the replaced output: the new one is in, the aside copy goes.
    aside.mkdir()
    (aside / "older.txt").write_text("older")
    recover_swap(out)
    assert _tree(out) == {"old.txt": "old"} and not aside.exists()


def test_a_recovered_output_still_counts_as_non_empty(tmp_path: Path) -> None:
    out = tmp_path / "out"
    aside_dir(out).mkdir()
    (aside_dir(out) / "old.txt").write_text("old")
    with pytest.raises(OutputDirNotEmptyError):
        refuse_non_empty(out, force=False)
    assert _tree(out) == {"old.txt": "old"}


KILL_AT_SWAP_RENAME = """
import os, signal, sys
from pathlib import Path
from rsi_hub.staging import fresh_staging_dir, swap_in

out = Path(sys.argv[1])
staging = fresh_staging_dir(out, "building")
(staging / "new.txt").write_text("new")
real_rename, real_replace = os.rename, os.replace

def killing(real):
    def move(src, dst, *args, **kwargs):
        if Path(src) == staging:  # the new output is about to be moved in: die right here
            os.kill(os.getpid(), signal.SIGKILL)
        return real(src, dst, *args, **kwargs)
    return move

os.rename, os.replace = killing(real_rename), killing(real_replace)
swap_in(staging, out)
"""


def test_kill_just_before_the_new_output_moves_in_keeps_the_old(tmp_path: Path) -> None:
    """SIGKILL a real swap at its most fragile step; the next start finds the old output."""
    import os
    import signal
    import subprocess
    import sys

    out = tmp_path / "out"
    out.mkdir()
    (out / "old.txt").write_text("old")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(Path.cwd()), *sys.path])}
    proc = subprocess.run([sys.executable, "-c", KILL_AT_SWAP_RENAME, str(out)], env=env)
    assert proc.returncode == -signal.SIGKILL
    fresh_staging_dir(out, "building")  # what the next run does first
    assert _tree(out) == {"old.txt": "old"}
    assert sorted(p.name for p in tmp_path.iterdir()) == [".out.building", "out"]
