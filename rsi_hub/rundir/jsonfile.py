"""Reading and writing the JSON records of a run directory.

Writes are atomic and durable: the text goes to a hidden temporary file beside the target,
which is flushed and fsynced, then renamed over the target, and the folder is fsynced so the
rename itself survives a power cut. A crash leaves the old file or the new one, never half.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from rsi_hub.crashpoint import crash_point
from rsi_hub.errors import RunDirError, RunFileMissingError


def _default(value: Any) -> Any:
    # lm-eval's configs hold functions and numpy numbers; keep them readable, never crash.
    item = getattr(value, "item", None)
    if callable(item) and type(value).__module__ == "numpy":
        return item()
    if isinstance(value, set | tuple):
        return list(value)
    return str(value)


def dumps(data: Any, *, indent: int | None = 2) -> str:
    """JSON text of a record; numpy scalars become numbers and anything else unknown a string."""
    return json.dumps(data, indent=indent, ensure_ascii=False, default=_default)


def fsync_dir(folder: str | Path) -> None:
    """fsync a folder, so a rename or a new file in it survives a crash (no-op where unsupported)."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:  # pragma: no cover - some filesystems refuse fsync on folders
        pass
    finally:
        os.close(fd)


def write_json_atomic(path: str | Path, data: Any) -> Path:
    """Write `data` as indented JSON to `path` atomically (temp file, fsync, rename); return it."""
    return write_text_atomic(path, dumps(data) + "\n")


def write_text_atomic(path: str | Path, text: str) -> Path:
    """Write `text` (UTF-8) to `path` atomically (temp file, fsync, rename); return it."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    try:
        with tmp.open("w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        crash_point()
        os.replace(tmp, path)
        crash_point()
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    fsync_dir(path.parent)
    return path


def read_json_object(path: str | Path, *, regenerate: str) -> dict[str, Any]:
    """The JSON object in `path`.

    Args:
        path: the file.
        regenerate: how to make the file again (a command), quoted in every error.

    Raises:
        RunFileMissingError: no such file.
        RunDirError: not valid JSON, or not a JSON object.
    """
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError as err:
        raise RunFileMissingError(f"{path}: missing; {regenerate}.") from err
    try:
        data = json.loads(text)
    except json.JSONDecodeError as err:
        raise RunDirError(f"{path}: not valid JSON ({err}); {regenerate}.") from err
    if not isinstance(data, dict):
        raise RunDirError(f"{path}: must hold a JSON object; {regenerate}.")
    return data
