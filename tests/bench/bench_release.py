"""Benchmark: staging a release with 2 GB of shards against `cp` of the same files, and hashing
throughput against `sha256sum`, measured in one run (a script run by hand, not a timed test).

    python tests/bench/bench_release.py [--gb 2] [--shards 4] [--dir DIR] [--repeat 3]

It builds a run directory in DIR (default: a temporary folder; give one on the file system where
releases are staged, since hard links cannot cross file systems) with the tiny checkpoint's
config, tokenizer and serving files and GB of random safetensors-named shards, then measures:

- staging (`rsi_hub.release.stage_release`: hash the shards, hard-link them, write the card and
  the manifest) against `cp` of the shards and their index into a fresh folder, and the ratio;
- staging when hard links are impossible (the copy fallback), for reference;
- sha256 of all shards by rsi_hub (`rsi_hub.hashing.sha256_files`, threads over files) against
  one `sha256sum` process over the same files, as a throughput ratio (target at least 0.8).

Every figure is the best of --repeat runs with the files in the page cache (both sides read the
same cached bytes). Everything it writes is removed at the end, also after an error.
"""

from __future__ import annotations

import argparse
import errno
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from unittest import mock

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from rsi_hub.hashing import sha256_file, sha256_files
from rsi_hub.release import manifest as manifest_module
from rsi_hub.release import stage_release
from rsi_hub.tiny import build_tiny

BLOCK = 64 * 1024 * 1024


def best_of(repeat: int, work: Callable[[], object], reset: Callable[[], None]) -> float:
    """The shortest wall time of `repeat` runs of `work`, calling `reset` before each."""
    times = []
    for _ in range(repeat):
        reset()
        start = time.perf_counter()
        work()
        times.append(time.perf_counter() - start)
    return min(times)


def make_run(root: Path, total_bytes: int, shards: int) -> tuple[Path, list[Path]]:
    """A run directory with the tiny checkpoint's small files and `shards` big random shards."""
    run = build_tiny(root / "run")
    (run / "model.safetensors").unlink()
    names = [f"model-{i:05d}-of-{shards:05d}.safetensors" for i in range(1, shards + 1)]
    block = os.urandom(BLOCK)
    per_shard = total_bytes // shards
    for name in names:
        with open(run / name, "wb") as out:
            left = per_shard
            while left > 0:
                out.write(block[: min(BLOCK, left)])
                left -= BLOCK
    weight_map = {f"layer{i}.weight": name for i, name in enumerate(names)}
    index = {"metadata": {"total_size": per_shard * shards}, "weight_map": weight_map}
    (run / "model.safetensors.index.json").write_text(json.dumps(index))
    return run, [run / name for name in names]


def clear_digest_cache() -> None:
    # Staging remembers digests per inode within a process; each timed staging must hash.
    manifest_module._DIGESTS.clear()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gb", type=float, default=2.0, help="total size of the shards (GB)")
    parser.add_argument("--shards", type=int, default=4, help="number of shards")
    parser.add_argument("--dir", help="where to build the run (default: a temporary folder)")
    parser.add_argument("--repeat", type=int, default=3, help="runs per measurement (best kept)")
    args = parser.parse_args()

    total = int(args.gb * 1e9)
    root = Path(tempfile.mkdtemp(prefix="bench-release-", dir=args.dir))
    try:
        print(f"building a run with {args.shards} shards, {total / 1e9:.2f} GB in all, in {root}")
        run, shards = make_run(root, total, args.shards)
        size = sum(p.stat().st_size for p in shards)
        out, copy_dst = root / "release", root / "cp"
        subprocess.run(
            ["sha256sum", *map(str, shards)], check=True, capture_output=True
        )  # warm cache

        def stage() -> None:
            stage_release(run, name="tiny", out=out, log=lambda _: None)

        def reset_stage() -> None:
            clear_digest_cache()
            shutil.rmtree(out, ignore_errors=True)

        def cp() -> None:
            subprocess.run(
                ["cp", *map(str, shards), str(run / "model.safetensors.index.json"), str(copy_dst)],
                check=True,
            )

        def reset_cp() -> None:
            shutil.rmtree(copy_dst, ignore_errors=True)
            copy_dst.mkdir()

        t_stage = best_of(args.repeat, stage, reset_stage)
        t_cp = best_of(args.repeat, cp, reset_cp)
        reset_cp()

        def no_link(src: object, dst: object) -> None:
            raise OSError(errno.EXDEV, "Invalid cross-device link")

        with mock.patch("os.link", no_link):
            t_stage_copy = best_of(1, stage, reset_stage)
        reset_stage()

        def ours() -> None:
            sha256_files(shards)

        def ours_one_thread() -> None:
            for shard in shards:
                sha256_file(shard)

        def coreutils() -> None:
            subprocess.run(["sha256sum", *map(str, shards)], check=True, capture_output=True)

        t_ours = best_of(args.repeat, ours, lambda: None)
        t_ours_1 = best_of(args.repeat, ours_one_thread, lambda: None)
        t_sum = best_of(args.repeat, coreutils, lambda: None)

        mb = size / 1e6
        print(f"cpus: {os.cpu_count()}, shards: {len(shards)} x {size / len(shards) / 1e6:.0f} MB")
        print("staging vs cp (same files, page cache warm):")
        print(f"  rsi-hub staging (hard links + hashing + card + manifest): {t_stage:7.3f} s")
        print(f"  cp of the shards and index:                                {t_cp:7.3f} s")
        print(f"  ratio staging / cp:                                        {t_stage / t_cp:7.3f}")
        print(f"  staging with the copy fallback (no hard links), one run:  {t_stage_copy:7.3f} s")
        print("hashing throughput:")
        print(f"  rsi-hub sha256_files (threads over files): {mb / t_ours:8.0f} MB/s")
        print(f"  rsi-hub sha256_file, one thread:           {mb / t_ours_1:8.0f} MB/s")
        print(f"  sha256sum (coreutils, one process):        {mb / t_sum:8.0f} MB/s")
        print(f"  ratio rsi-hub / sha256sum:                 {t_sum / t_ours:8.3f} (target >= 0.8)")
        print(f"  ratio one thread / sha256sum:              {t_sum / t_ours_1:8.3f}")
    finally:
        shutil.rmtree(root, ignore_errors=True)
        print(f"removed {root}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
