"""Output folders are replaced whole: the old one survives until the new one is complete."""

from __future__ import annotations

from pathlib import Path

import pytest

from rsi_hub.errors import OutputDirNotEmptyError
from rsi_hub.staging import fresh_staging_dir, refuse_non_empty, swap_in


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
