"""Souping streams: peak memory stays under the stated bound on a multi-shard checkpoint.

The bound (see tests/bench/soup_memory.py): the resident memory souping adds is at most one read
window (or input shard, if smaller) per ingredient, four copies of the largest tensor and 64 MB
of slack, far below the bytes it reads (every ingredient in full).
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).parent / "bench" / "soup_memory.py"


@pytest.fixture(scope="module")
def bench():
    spec = importlib.util.spec_from_file_location("soup_memory", BENCH)
    module = importlib.util.module_from_spec(spec)
    sys.modules["soup_memory"] = module
    spec.loader.exec_module(module)
    return module


@pytest.mark.skipif(not Path("/proc/self/clear_refs").exists(), reason="needs Linux /proc")
@pytest.mark.parametrize(("shard_mb", "window_mb"), [(32, 1024), (96, 16)])
def test_peak_memory_stays_near_one_window_per_ingredient(
    bench, tmp_path: Path, shard_mb: int, window_mb: int
) -> None:
    # Two ingredients of 24 tensors x 4 MB = 96 MB each: 192 MB read, 96 MB written.
    result = bench.run(tmp_path, tensors=24, tensor_mb=4, shard_mb=shard_mb, window_mb=window_mb)
    assert result["checkpoint_mb"] == 96
    assert result["added_mb"] <= result["bound_mb"], result
    assert result["added_mb"] < 2 * result["checkpoint_mb"], result
