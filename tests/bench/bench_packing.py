"""Packing efficiency of the GPU recipes' packer (TRL `bfd`, as SFTTrainer runs it) into 8,192-token bins.

Run by hand:  python tests/bench/bench_packing.py [--rows N] [--seed S]

Lengths are drawn per source from a log-normal whose mean is the card's tokens/samples for that
source (section 2: tulu3 768, smoltalk 852, magpie 721, numina 519, iflensyn 117 tokens per row),
with a spread typical of chat data (sigma 0.9), clipped to [16, 8192] (prep drops longer rows).
Efficiency = real tokens / (bins x 8,192). Target: at least 98 %.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

BIN = 8192
TARGET = 0.98
# Card section 2: tokens / samples of each prepared source.
MEAN_TOKENS = {"tulu3": 726.2e6 / 946_008, "smoltalk": 425.9e6 / 500_061, "magpie": 216.4e6 / 300_001,
               "numina": 77.9e6 / 150_001, "iflensyn": 44.1e6 / 375_752}  # fmt: skip
MIXES = {
    "b1 (tulu3, smoltalk, magpie, numina)": {"tulu3": 946_008, "smoltalk": 500_061, "magpie": 300_001, "numina": 150_001},
    "LA2b200s (iflensyn:33000)": {"iflensyn": 33_000},
}  # fmt: skip


def lengths_for(
    mix: dict[str, int], rows: int, rng: np.random.Generator, sigma: float = 0.9
) -> np.ndarray:
    total = sum(mix.values())
    parts = []
    for name, count in mix.items():
        n = max(1, round(rows * count / total))
        mu = np.log(MEAN_TOKENS[name]) - sigma**2 / 2  # log-normal with the card's mean
        parts.append(np.clip(rng.lognormal(mu, sigma, n), 16, BIN).astype(np.int64))
    lengths = np.concatenate(parts)
    rng.shuffle(lengths)  # shuffle_dataset=True in the recipes: sources are mixed before packing
    return lengths


def pack(lengths: np.ndarray, packer) -> tuple[int, float]:
    """Pack rows of the given lengths with `packer`; return (bins, seconds)."""
    import pyarrow as pa
    from datasets import Dataset

    offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    values = pa.array(np.ones(int(offsets[-1]), dtype=np.int32))
    column = pa.LargeListArray.from_arrays(pa.array(offsets), values)
    dataset = Dataset(pa.table({"input_ids": column, "labels": column}))
    start = time.perf_counter()
    packed = packer(dataset)
    return len(packed), time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=40_000, help="rows per mix (default 40,000)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    from trl.data_utils import pack_dataset

    from rsi_hub.train.packing import pack_for_training

    packers = {
        "TRL bfd, SFTTrainer's default map batch (1,000 rows)": lambda d: pack_dataset(
            d, BIN, "bfd"
        ),
        "rsi-hub: TRL bfd over whole shards (pack_for_training)": lambda d: pack_for_training(
            d, BIN
        ),
    }
    rng = np.random.default_rng(args.seed)
    for mix_name, mix in MIXES.items():
        lengths = lengths_for(mix, min(args.rows, sum(mix.values())), rng)
        print(
            f"{mix_name}: {len(lengths):,} rows, {lengths.sum():,} tokens, mean {lengths.mean():.0f}"
        )
        for packer_name, packer in packers.items():
            bins, seconds = pack(lengths, packer)
            efficiency = lengths.sum() / (bins * BIN)
            verdict = "OK" if efficiency >= TARGET else "BELOW TARGET"
            print(f"  {packer_name}: {bins:,} bins, efficiency {efficiency:.2%} "
                  f"(target >= {TARGET:.0%}: {verdict}), {seconds:.1f} s")  # fmt: skip


if __name__ == "__main__":
    main()
