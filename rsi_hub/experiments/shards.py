"""Reading the tensor layout of a safetensors checkpoint and writing shards tensor by tensor.

Both sides stream: the layout is read from the shard headers only (no tensor data), and a shard
is written by emitting its header first (the plan knows every name, dtype and shape in advance)
and then each tensor's bytes as soon as it is computed, so that writing never holds more than one
tensor in memory, whatever the shard size.
"""

from __future__ import annotations

import json
import math
import re
import struct
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from rsi_hub.errors import ExperimentError, ExperimentFileError, ExperimentInputError

SINGLE_FILE = "model.safetensors"
INDEX_FILE = "model.safetensors.index.json"

# Bytes per element of each safetensors dtype string (the format's own names).
DTYPE_SIZES: dict[str, int] = {
    "F64": 8,
    "F32": 4,
    "F16": 2,
    "BF16": 2,
    "F8_E4M3": 1,
    "F8_E5M2": 1,
    "I64": 8,
    "I32": 4,
    "I16": 2,
    "I8": 1,
    "U8": 1,
    "BOOL": 1,
}
FLOAT_DTYPES = frozenset({"F64", "F32", "F16", "BF16", "F8_E4M3", "F8_E5M2"})

_SIZE_RE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([KMGT]?I?B?)\s*$", re.IGNORECASE)
_UNITS = {"": 1, "B": 1, "K": 10**3, "M": 10**6, "G": 10**9, "T": 10**12}


class CheckpointLayoutError(ExperimentFileError):
    """A folder holds no readable safetensors checkpoint, or its index and shards disagree."""


@dataclass(frozen=True)
class TensorInfo:
    """Where one tensor lives and what it is, read from a shard header."""

    name: str
    dtype: str
    shape: tuple[int, ...]
    shard: str

    @property
    def nbytes(self) -> int:
        """Size of the tensor's data in bytes."""
        return math.prod(self.shape) * DTYPE_SIZES[self.dtype]


def parse_size(size: str | int) -> int:
    """Parse a shard size such as `5GB`, `500MB`, `2GiB` or a byte count into bytes."""
    if isinstance(size, int):
        return size
    match = _SIZE_RE.match(size)
    if not match:
        raise ExperimentInputError(
            f"cannot read the size {size!r}: write e.g. 5GB, 500MB or 1048576.",
            field="max_shard_size",
        )
    number, unit = float(match.group(1)), match.group(2).upper()
    binary = "I" in unit
    prefix = unit.replace("I", "").replace("B", "")
    factor = (1024 ** "KMGT".index(prefix) * 1024) if binary and prefix else _UNITS[prefix]
    return int(number * factor)


def read_header(path: Path) -> dict[str, dict]:
    """Return the JSON header of one safetensors file (tensor entries and `__metadata__`)."""
    with path.open("rb") as handle:
        (length,) = struct.unpack("<Q", handle.read(8))
        return json.loads(handle.read(length))


def shard_files(folder: Path) -> list[str]:
    """The shard file names of the checkpoint in `folder`, in the order its index lists them."""
    index = folder / INDEX_FILE
    if index.is_file():
        weight_map = json.loads(index.read_text())["weight_map"]
        return sorted(set(weight_map.values()))
    if (folder / SINGLE_FILE).is_file():
        return [SINGLE_FILE]
    raise CheckpointLayoutError(
        f"{folder} has neither {SINGLE_FILE} nor {INDEX_FILE}: is it a run directory "
        "with safetensors weights?"
    )


def read_layout(folder: str | Path) -> dict[str, TensorInfo]:
    """Map every tensor name of the checkpoint in `folder` to its dtype, shape and shard.

    Reads the shard headers only. Names come in shard order, then in file order within a shard,
    which is the order that reads each shard front to back.

    Raises:
        CheckpointLayoutError: no checkpoint, a shard named by the index is missing, or the index
            and the shard headers name different tensors.
    """
    folder = Path(folder)
    layout: dict[str, TensorInfo] = {}
    for shard in shard_files(folder):
        path = folder / shard
        if not path.is_file():
            raise CheckpointLayoutError(f"{folder / INDEX_FILE} names {shard}, which is missing.")
        header = read_header(path)
        entries = sorted(
            ((k, v) for k, v in header.items() if k != "__metadata__"),
            key=lambda item: item[1]["data_offsets"][0],
        )
        for name, entry in entries:
            if entry["dtype"] not in DTYPE_SIZES:
                raise CheckpointLayoutError(
                    f"{path}: tensor {name} has dtype {entry['dtype']}, which soups do not handle."
                )
            layout[name] = TensorInfo(name, entry["dtype"], tuple(entry["shape"]), shard)
    index = folder / INDEX_FILE
    if index.is_file():
        mapped = set(json.loads(index.read_text())["weight_map"])
        if mapped != set(layout):
            first = sorted(mapped ^ set(layout))[0]
            raise CheckpointLayoutError(
                f"{index} and the shard headers disagree, first on tensor {first}."
            )
    return layout


def plan_shards(tensors: Iterable[TensorInfo], max_shard_bytes: int) -> list[list[TensorInfo]]:
    """Split tensors, in the order given, into shards of at most `max_shard_bytes` each.

    A tensor larger than the limit gets a shard of its own (as `save_pretrained` does).
    """
    shards: list[list[TensorInfo]] = [[]]
    size = 0
    for info in tensors:
        if shards[-1] and size + info.nbytes > max_shard_bytes:
            shards.append([])
            size = 0
        shards[-1].append(info)
        size += info.nbytes
    return shards if shards[0] else []


def shard_name(index: int, total: int) -> str:
    """The transformers name of shard `index` (0-based) of `total`."""
    return f"model-{index + 1:05d}-of-{total:05d}.safetensors"


def _header_bytes(tensors: list[TensorInfo], metadata: dict[str, str]) -> bytes:
    header: dict[str, object] = {"__metadata__": metadata}
    offset = 0
    for info in tensors:
        header[info.name] = {
            "dtype": info.dtype,
            "shape": list(info.shape),
            "data_offsets": [offset, offset + info.nbytes],
        }
        offset += info.nbytes
    raw = json.dumps(header, separators=(",", ":")).encode()
    # The reference writer pads the header with spaces to a multiple of 8 so data stays aligned.
    raw += b" " * (-len(raw) % 8)
    return struct.pack("<Q", len(raw)) + raw


class ShardWriter:
    """Writes one safetensors shard whose tensors are known in advance, one tensor at a time.

    Tensors must be written in the planned order; `close` checks that all of them were.
    """

    def __init__(
        self, path: Path, tensors: list[TensorInfo], metadata: dict[str, str] | None = None
    ) -> None:
        self.path = path
        self._pending: Iterator[TensorInfo] = iter(tensors)
        self._count = len(tensors)
        self._written = 0
        self._handle: BinaryIO = path.open("wb")
        self._handle.write(_header_bytes(tensors, metadata or {"format": "pt"}))

    def write(self, name: str, data: memoryview | bytes) -> None:
        """Append the raw little-endian bytes of the next planned tensor."""
        expected = next(self._pending, None)
        if expected is None or expected.name != name or expected.nbytes != len(data):
            raise ExperimentError(
                f"internal error writing {self.path}: got {name} ({len(data)} bytes), "
                f"expected {expected.name if expected else 'no more tensors'}.",
                path=self.path,
            )
        self._handle.write(data)
        self._written += 1

    def close(self) -> None:
        """Close the file; raises if a planned tensor was never written."""
        self._handle.close()
        if self._written != self._count:
            raise ExperimentError(
                f"internal error: {self.path} got {self._written} of {self._count} tensors.",
                path=self.path,
            )


def write_index(folder: Path, shards: list[list[TensorInfo]], metadata: dict) -> Path:
    """Write `model.safetensors.index.json` for the planned shards and return its path."""
    total = len(shards)
    weight_map = {
        info.name: shard_name(i, total) for i, shard in enumerate(shards) for info in shard
    }
    index = {
        "metadata": {"total_size": sum(i.nbytes for s in shards for i in s), **metadata},
        "weight_map": dict(sorted(weight_map.items())),
    }
    path = folder / INDEX_FILE
    path.write_text(json.dumps(index, indent=2) + "\n")
    return path
