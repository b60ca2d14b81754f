"""Peak memory of `rsi-hub soup` against shard size, on a synthetic multi-shard checkpoint.

Run by hand for the figures (`python tests/bench/soup_memory.py --shard-mb 16 32 64`); the test
`tests/test_soup_memory.py` runs it once with small sizes and checks the stated bound.

Each measurement souping runs in a fresh interpreter: its resident set just before the soup is
subtracted from its peak resident set (`VmHWM`, reset just before) after it, so the figure is what souping
added, not the cost of importing torch.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

MB = 1 << 20


def synthesize(folder: Path, *, tensors: int, tensor_mb: int, shard_mb: int, seed: int) -> None:
    """Write a sharded F32 checkpoint of `tensors` tensors of `tensor_mb` MB each."""
    import torch
    from safetensors.torch import save_file

    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config.json").write_text(json.dumps({"model_type": "synthetic", "n": tensors}))
    per_shard = max(1, shard_mb // tensor_mb)
    shards = [list(range(i, min(i + per_shard, tensors))) for i in range(0, tensors, per_shard)]
    weight_map = {}
    rows = tensor_mb * MB // 4 // 1024
    for s, ids in enumerate(shards):
        name = f"model-{s + 1:05d}-of-{len(shards):05d}.safetensors"
        # Cheap deterministic values that differ per ingredient (seed) and per tensor.
        data = {
            f"layers.{i}.weight": torch.arange(rows * 1024, dtype=torch.float32)
            .reshape(rows, 1024)
            .mul_(1e-6 * (seed + 1))
            .add_(i)
            for i in ids
        }
        save_file(data, str(folder / name), metadata={"format": "pt"})
        weight_map.update(dict.fromkeys(data, name))
    index = {"metadata": {"total_size": tensors * tensor_mb * MB}, "weight_map": weight_map}
    (folder / "model.safetensors.index.json").write_text(json.dumps(index))


def _status_kb(field: str) -> int:
    with open("/proc/self/status") as handle:
        for line in handle:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise RuntimeError(f"/proc/self/status has no {field}")


def _reset_peak() -> None:
    # Linux: writing 5 to clear_refs resets the peak resident set (VmHWM) to the current one.
    # ru_maxrss cannot be used: it survives execve, so it would report the parent's peak.
    with open("/proc/self/clear_refs", "w") as handle:
        handle.write("5")


def measure(ingredients: list[str], out: str, max_shard_size: str, read_window: str) -> dict:
    """Soup in this process and return the resident memory it added (MB)."""
    import safetensors.torch  # noqa: F401  (imported before the baseline is taken)
    import torch  # noqa: F401

    from rsi_hub.experiments.soup import soup

    before_kb = _status_kb("VmRSS")
    _reset_peak()
    report = soup(
        ingredients, out, max_shard_size=max_shard_size, read_window=read_window, force=True
    )
    peak_kb = _status_kb("VmHWM")
    return {
        "baseline_mb": before_kb / 1024,
        "peak_mb": peak_kb / 1024,
        "added_mb": (peak_kb - before_kb) / 1024,
        "checkpoint_mb": report.total_bytes / MB,
        "output_shards": len(report.shards),
    }


def run(
    workdir: Path,
    *,
    tensors: int,
    tensor_mb: int,
    shard_mb: int,
    ingredients: int = 2,
    out_shard_mb: int | None = None,
    window_mb: int = 1024,
) -> dict:
    """Build `ingredients` synthetic checkpoints sharded at `shard_mb`, soup them, report."""
    runs = []
    for seed in range(ingredients):
        folder = workdir / f"ing{seed}-s{shard_mb}"
        if not folder.exists():
            synthesize(folder, tensors=tensors, tensor_mb=tensor_mb, shard_mb=shard_mb, seed=seed)
        runs.append(str(folder))
    out_mb = out_shard_mb or shard_mb
    code = (
        "import json, sys; sys.path.insert(0, sys.argv[1]); import soup_memory as m; "
        "print(json.dumps(m.measure(json.loads(sys.argv[2]), *sys.argv[3:6])))"
    )
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            code,
            str(Path(__file__).parent),
            json.dumps(runs),
            str(workdir / f"soup-s{shard_mb}"),
            f"{out_mb}MB",
            f"{window_mb}MB",
        ],
        capture_output=True,
        text=True,
        # The repository root, so that the child imports this checkout's rsi_hub.
        cwd=Path(__file__).resolve().parents[2],
    )
    if done.returncode:
        raise RuntimeError(f"soup measurement failed:\n{done.stderr}")
    result = json.loads(done.stdout.strip().splitlines()[-1])
    result.update(
        ingredients=ingredients,
        input_shard_mb=shard_mb,
        output_shard_mb=out_mb,
        tensor_mb=tensor_mb,
        read_window_mb=window_mb,
        # The stated bound: one read window (or shard, if smaller) per ingredient, a few copies
        # of the largest tensor (read, FP32 accumulator, cast, byte view) and allocator slack.
        bound_mb=ingredients * min(shard_mb, window_mb) + 4 * tensor_mb + 64,
    )
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--tensors", type=int, default=48)
    parser.add_argument("--tensor-mb", type=int, default=4)
    parser.add_argument("--shard-mb", type=int, nargs="+", default=[16, 32, 64, 128])
    parser.add_argument("--ingredients", type=int, default=2)
    parser.add_argument("--read-window-mb", type=int, default=1024)
    parser.add_argument("--workdir", type=Path, default=None)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(dir=args.workdir) as tmp:
        for shard_mb in args.shard_mb:
            print(
                json.dumps(
                    run(
                        Path(tmp),
                        tensors=args.tensors,
                        tensor_mb=args.tensor_mb,
                        shard_mb=shard_mb,
                        ingredients=args.ingredients,
                        window_mb=args.read_window_mb,
                    )
                ),
                flush=True,
            )


if __name__ == "__main__":
    main()
