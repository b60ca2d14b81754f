"""Output folders written beside their target and swapped in whole at the end.

An interrupted build, prep, soup, release staging or evaluation leaves the previous output (or,
once the swap has begun, the new one) and never neither:

1. the new output is written into a hidden sibling `.NAME.PURPOSE` and fsynced;
2. the old output is renamed aside to `.NAME.old` (never deleted first);
3. the new one is renamed to `NAME`;
4. the aside copy is deleted.

A kill between 2 and 3 leaves only `.NAME.old`: `recover_swap`, which every writer runs on
start, renames it back. A kill during 4 leaves both: the aside copy is then deleted. A leftover
`.NAME.PURPOSE` is cleared by the next run.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from rsi_hub.crashpoint import crash_point
from rsi_hub.errors import OutputDirNotEmptyError


def aside_dir(out: Path) -> Path:
    """Where `swap_in` keeps the previous `out` while the new one is renamed in."""
    return out.with_name(f".{out.name}.old")


def recover_swap(out: Path) -> None:
    """Finish or undo a swap into `out` that a kill interrupted (a no-op when none was).

    The aside copy alone means the kill came between the two renames: it is the previous
    output and is put back. Beside a present `out` it is the replaced output whose deletion was
    cut short: it is deleted.
    """
    aside = aside_dir(out)
    if not aside.exists():
        return
    if out.exists():
        shutil.rmtree(aside)
    else:
        os.rename(aside, out)
    crash_point()


def refuse_non_empty(out: Path, *, force: bool) -> None:
    """Raise unless `out` is missing or empty, or `force` allows replacing it.

    An interrupted swap is recovered first, so a previous output waiting aside counts.

    Raises:
        OutputDirNotEmptyError: `out` holds files and `force` is false.
    """
    recover_swap(out)
    if out.exists() and any(out.iterdir()) and not force:
        raise OutputDirNotEmptyError(
            f"{out} is not empty: pass --force to replace it, or choose another folder."
        )


def fresh_staging_dir(out: Path, purpose: str) -> Path:
    """An empty sibling folder `.NAME.PURPOSE` of `out` to write the new output into."""
    recover_swap(out)
    staging = out.with_name(f".{out.name}.{purpose}")
    if staging.exists():
        shutil.rmtree(staging)
    staging.mkdir(parents=True)
    return staging


def _fsync(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _fsync_tree(folder: Path) -> None:
    # The new files must be on disk before the rename makes them the output: otherwise a power
    # cut after the rename could leave a folder of empty files where the old output was.
    for root, _dirs, files in os.walk(folder):
        for name in files:
            _fsync(Path(root) / name)
        _fsync(Path(root))


def swap_in(staging: Path, out: Path) -> None:
    """Replace `out` (if any) by the finished `staging` folder, never leaving neither."""
    recover_swap(out)
    _fsync_tree(staging)
    crash_point()
    aside = aside_dir(out)
    replacing = out.exists()
    if replacing:
        os.rename(out, aside)
        crash_point()
    os.rename(staging, out)
    _fsync(out.parent)  # make both renames durable before the old copy goes
    crash_point()
    if replacing:
        shutil.rmtree(aside)
        crash_point()
