"""Output folders written beside their target and swapped in whole at the end.

An interrupted build, prep or soup leaves the previous output untouched and no half-written
folder in its place; only a hidden `.NAME.PURPOSE` sibling remains, which the next run clears.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from rsi_hub.errors import OutputDirNotEmptyError


def refuse_non_empty(out: Path, *, force: bool) -> None:
    """Raise unless `out` is missing or empty, or `force` allows replacing it.

    Raises:
        OutputDirNotEmptyError: `out` holds files and `force` is false.
    """
    if out.exists() and any(out.iterdir()) and not force:
        raise OutputDirNotEmptyError(
            f"{out} is not empty: pass --force to replace it, or choose another folder."
        )


def fresh_staging_dir(out: Path, purpose: str) -> Path:
    """An empty sibling folder `.NAME.PURPOSE` of `out` to write the new output into."""
    staging = out.with_name(f".{out.name}.{purpose}")
    if staging.exists():
        shutil.rmtree(staging)
    staging.mkdir(parents=True)
    return staging


def swap_in(staging: Path, out: Path) -> None:
    """Replace `out` (if any) by the finished `staging` folder."""
    if out.exists():
        shutil.rmtree(out)
    staging.rename(out)
