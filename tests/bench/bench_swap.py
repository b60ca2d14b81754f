"""Benchmark of the durable output swap (a script run by hand, never collected by pytest).

    python tests/bench/bench_swap.py [--files 200] [--kib 256] [--repeat 3]

Times `rsi_hub.staging.swap_in` (fsync the new tree, move the old output aside, rename the new
one in, fsync the parent, delete the old) against the unsafe baseline it replaced (delete the
old output, rename the new one in), both replacing a folder of `--files` freshly written files
of `--kib` KiB each, measured in the same run (best of `--repeat`). The ratio is the price of
"old or new, never neither": mostly the fsyncs, which write back data the kernel would have
written anyway; against the minutes it takes to write a real output it is noise.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from rsi_hub.staging import fresh_staging_dir, swap_in


def _write_tree(folder: Path, files: int, kib: int) -> None:
    block = os.urandom(kib * 1024)
    for i in range(files):
        (folder / f"part-{i:04d}.bin").write_bytes(block)


def _unsafe_swap(staging: Path, out: Path) -> None:
    if out.exists():
        shutil.rmtree(out)
    staging.rename(out)


def _time(swap, root: Path, files: int, kib: int) -> float:
    out = root / "out"
    out.mkdir(exist_ok=True)
    _write_tree(out, files, kib)
    staging = fresh_staging_dir(out, "bench")
    _write_tree(staging, files, kib)
    start = time.perf_counter()
    swap(staging, out)
    return time.perf_counter() - start


def main() -> None:
    """Print the time of each swap and the ratio of the durable one to the baseline."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--files", type=int, default=200)
    parser.add_argument("--kib", type=int, default=256)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(dir=Path.cwd()) as tmp:
        root = Path(tmp)
        base = min(_time(_unsafe_swap, root, args.files, args.kib) for _ in range(args.repeat))
        safe = min(_time(swap_in, root, args.files, args.kib) for _ in range(args.repeat))
    size = args.files * args.kib / 1024
    print(f"replacing {args.files} files ({size:.0f} MiB), best of {args.repeat}:")
    print(f"  baseline rmtree + rename:            {base * 1000:8.1f} ms")
    print(f"  swap_in (fsync, aside, rename, rm):  {safe * 1000:8.1f} ms")
    print(f"  ratio swap_in / baseline:            {safe / base:8.1f}")


if __name__ == "__main__":
    main()
