"""Prep throughput against a bare tokenizer pass over the same texts, in the same run.

Run by hand:  python tests/bench/bench_prep_throughput.py [--rows N] [--tokenizer MODEL_DIR]

`rsi-hub prep` reads a JSONL source, converts rows to ChatML, checks every user prompt against
the holdout index, renders each conversation prefix by prefix with the served template,
tokenises it segment by segment, builds the assistant mask, hashes and writes the rows. The
bare pass is only `tokenizer(texts, add_special_tokens=False)` over the same rendered texts,
in batches of the same size. Ratio = prep seconds / bare seconds; target at most 1.5. Prep calls
the Rust backend directly (`encode_batch_fast`), so the ratio against that rawer pass is printed
too.

The data is synthetic chat shaped like the card's general mix: a quarter multi-turn, user turns
~60 words and answers ~200 words on average (log-normal), some rows with a system message.
"""

from __future__ import annotations

import argparse
import json
import random
import tempfile
import time
from importlib import resources
from pathlib import Path

TARGET = 1.5


def _words() -> list[str]:
    text = resources.files("rsi_hub.resources").joinpath("tiny_corpus.txt").read_text("utf-8")
    return text.split()


def _sentence(rng: random.Random, words: list[str], mean_words: float) -> str:
    n = max(3, int(rng.lognormvariate(0, 0.7) * mean_words / 1.28))
    return " ".join(rng.choice(words) for _ in range(n))


def synthetic_rows(n: int, seed: int = 0) -> list[dict]:
    """Chat rows with realistic turn counts and lengths, from the tiny corpus's vocabulary."""
    rng = random.Random(seed)
    words = _words()
    rows = []
    for _ in range(n):
        turns = rng.choice([1, 1, 1, 2, 3])
        messages = (
            [{"role": "system", "content": _sentence(rng, words, 20)}] if rng.random() < 0.2 else []
        )
        for _ in range(turns):
            messages.append({"role": "user", "content": _sentence(rng, words, 60)})
            messages.append({"role": "assistant", "content": _sentence(rng, words, 200)})
        rows.append({"messages": messages})
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=4000)
    parser.add_argument(
        "--rounds", type=int, default=3, help="interleaved repetitions; best of each is kept"
    )
    parser.add_argument(
        "--tokenizer", default=None, help="model folder (default: the tiny tokenizer)"
    )
    args = parser.parse_args()

    from transformers import AutoTokenizer

    from rsi_hub.chat import render
    from rsi_hub.data import prepare
    from rsi_hub.data.config import PrepConfig
    from rsi_hub.data.prep import BATCH_ROWS
    from rsi_hub.tiny import build_tiny_tokenizer

    tokenizer = (
        AutoTokenizer.from_pretrained(args.tokenizer) if args.tokenizer else build_tiny_tokenizer()
    )
    rows = synthetic_rows(args.rows)
    with tempfile.TemporaryDirectory() as tmp:
        source = Path(tmp) / "bench.jsonl"
        source.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
        options = {"sources": {"iflensyn": str(source)}, "force": True}
        # Warm-up: template compilation, holdout index, datasets' JSON->Arrow cache of the source.
        prepare(PrepConfig("iflensyn:200", Path(tmp) / "warm", **options), tokenizer=tokenizer)

        texts = [
            render(r["messages"], add_generation_prompt=False, use_default_system_prompt=False)
            for r in rows
        ]

        def bare_pass() -> int:
            count = 0
            for i in range(0, len(texts), BATCH_ROWS):
                encoded = tokenizer(texts[i : i + BATCH_ROWS], add_special_tokens=False)[
                    "input_ids"
                ]
                count += sum(len(ids) for ids in encoded)
            return count

        def backend_pass() -> int:
            # The Rust tokenizer alone, as prep itself calls it (no Python encoding objects).
            backend = tokenizer.backend_tokenizer
            count = 0
            for i in range(0, len(texts), BATCH_ROWS):
                encoded = backend.encode_batch_fast(
                    texts[i : i + BATCH_ROWS], add_special_tokens=False
                )
                count += sum(len(e.ids) for e in encoded)
            return count

        # Interleaved rounds, best of each: a shared machine's load hits all alike.
        labels = ("bare tokenizer pass", "prep (holdout guard on)", "prep (guard off)")
        best = dict.fromkeys(labels, float("inf"))
        best_backend = float("inf")
        for _ in range(args.rounds):
            start = time.perf_counter()
            bare_tokens = bare_pass()
            best[labels[0]] = min(best[labels[0]], time.perf_counter() - start)
            start = time.perf_counter()
            backend_pass()
            best_backend = min(best_backend, time.perf_counter() - start)
            for label, guard in zip(labels[1:], (True, False), strict=True):
                start = time.perf_counter()
                config = PrepConfig(
                    "iflensyn:all", Path(tmp) / "out", holdout_guard=guard, **options
                )
                result = prepare(config, tokenizer=tokenizer)
                best[label] = min(best[label], time.perf_counter() - start)
        tokens = result.stats["total"]["tokens"]

    bare = best.pop(labels[0])
    print(
        f"{len(rows):,} conversations, {tokens:,} tokens (bare pass: {bare_tokens:,}), best of {args.rounds}"
    )
    print(
        f"bare tokenizer pass, tokenizer(texts): {bare:.2f} s, {bare_tokens / bare:,.0f} tokens/s"
    )
    print(
        f"bare Rust backend pass, encode_batch_fast: {best_backend:.2f} s, {bare_tokens / best_backend:,.0f} tokens/s"
    )
    for label, seconds in best.items():
        ratio = seconds / bare
        verdict = "OK" if ratio <= TARGET else "ABOVE TARGET"
        print(f"{label}: {seconds:.2f} s, {tokens / seconds:,.0f} tokens/s, ratio {ratio:.2f} "
              f"(target <= {TARGET}: {verdict}); vs the backend pass {seconds / best_backend:.2f}")  # fmt: skip


if __name__ == "__main__":
    main()
