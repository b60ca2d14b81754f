"""Benchmark of the checker (a script run by hand, never collected by pytest).

    python tests/bench/bench_checker.py [--pairs 100000] [--repeat 3]

1. Throughput on the instruction-following mix: builds `--pairs` (response, checks) pairs whose
   check types are drawn with card §5's frequencies (prompts carrying each type out of 818),
   judges them all with `check()`, and prints constraints per second and the cost per judged
   constraint as a ratio to one bare `t.split()` over the same response (t = the stripped
   response), both measured in the same run (best of `--repeat`). Target: ratio <= 1.5.
2. Worst case: a 10 MB hostile response (runs of `.`, `[`, `|`, `-` and spaces; a second
   variant adds newlines; a third is Unicode: long runs of combining marks in mixed classes,
   U+0344 (two marks), and NFKC-expanding `ǅ`, `ﬁ`, U+2028) judged on every registered check
   type; target < 1 s in total. Each line also gives the ratio to one bare `t.split()` of the
   same response, measured in the same run.
"""

from __future__ import annotations

import argparse
import gc
import json
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from rsi_hub.checker import REGISTRY, check
from rsi_hub.checker.checks_counts import count_word
from rsi_hub.checker.checks_structure import bullet_count, numbered_items
from rsi_hub.checker.context import Context
from rsi_hub.suites.mixes import IF818_COUNTS, IF818_SIZE, IF818_STRUCTURAL

# Card §5: prompts carrying each type, of 818 (the suite generator's own table). The 26
# structural prompts are spread evenly over the structural types.
CARD_MIX = IF818_COUNTS
STRUCTURAL = list(IF818_STRUCTURAL)
N_PROMPTS = IF818_SIZE

WORDS = [
    "the",
    "of",
    "and",
    "to",
    "in",
    "is",
    "that",
    "for",
    "it",
    "as",
    "was",
    "with",
    "be",
    "by",
    "on",
    "not",
    "this",
    "are",
    "from",
    "at",
    "or",
    "an",
    "have",
    "which",
    "one",
    "all",
    "were",
    "their",
    "has",
    "been",
    "more",
    "will",
    "would",
    "there",
    "when",
    "can",
    "light",
    "water",
    "energy",
    "system",
    "people",
    "time",
    "process",
    "plant",
    "city",
    "river",
    "market",
    "data",
    "model",
    "result",
    "change",
    "history",
    "because",
    "however",
    "although",
    "during",
    "between",
    "important",
    "different",
    "several",
    "natural",
    "quickly",
    "carefully",
    "simple",
    "clear",
    "strong",
    "small",
    "large",
    "early",
    "modern",
    "local",
    "global",
    "green",
    "bright",
]


def sentence(rng: random.Random) -> str:
    n = rng.randint(6, 22)
    words = [rng.choice(WORDS) for _ in range(n)]
    if rng.random() < 0.15:
        words.insert(rng.randrange(n), f"{rng.randint(2, 999)}.{rng.randint(0, 9)}")
    if rng.random() < 0.1:
        words.insert(rng.randrange(n), "don’t")
    if rng.random() < 0.2:
        words[rng.randrange(n)] += ","
    end = rng.choice(".....!?")
    return " ".join(words).capitalize() + end


def prose(rng: random.Random, words: int) -> str:
    out: list[str] = []
    count = 0
    while count < words:
        s = sentence(rng)
        out.append(s)
        count += len(s.split())
    paras = rng.choice([1, 1, 2, 3])
    if paras > 1 and len(out) > paras:
        cut = len(out) // paras
        return "\n\n".join(" ".join(out[i : i + cut]) for i in range(0, len(out), cut))
    return " ".join(out)


def response_for(types: set[str], rng: random.Random) -> str:
    body = prose(rng, rng.randint(20, 300))
    if types & {"bullet", "numbered", "numbered_start"}:
        items = [sentence(rng) for _ in range(rng.randint(2, 6))]
        lst = "\n".join(
            (f"{i}. {x}" if "bullet" not in types else f"- {x}") for i, x in enumerate(items, 1)
        )
        body = body + "\n\n" + lst
    if "table_rows" in types:
        rows = "\n".join(f"| {rng.choice(WORDS)} | {rng.randint(1, 99)} |" for _ in range(4))
        body = "Here is the table:\n\n| name | value |\n|:---|---:|\n" + rows
    if types & {"json_keys", "json_keys_any"}:
        body = json.dumps({w: sentence(rng) for w in rng.sample(WORDS, 4)}, indent=2)
    if "json_array_len" in types:
        body = "```json\n" + json.dumps([sentence(rng) for _ in range(3)]) + "\n```"
    if "is_upper" in types:
        body = body.upper()
    lead = "  " if rng.random() < 0.3 else ""
    return lead + body + ("\n" if rng.random() < 0.5 else "")


# Card §5 miss rates (prompts failing / carrying); the structural checks never failed.
MISS = {
    "word_eq": 80 / 86,
    "word_times": 70 / 142,
    "sent": 52 / 603,
    "contains_norm": 22 / 113,
    "no_word": 11 / 111,
    "word_max": 9 / 53,
    "startswith": 7 / 90,
    "endswith": 7 / 100,
    "no_char": 3 / 88,
    "para": 2 / 7,
}


def constraint(kind: str, response: str, rng: random.Random) -> dict:
    """A constraint of type `kind` that `response` meets, or misses with the card's miss rate
    (like a model's answer to the suite), so that the reasons built match a realistic mix."""
    ctx = Context(response)
    miss = rng.random() < MISS.get(kind, 0.0)
    words = ctx.words()
    word = rng.choice(WORDS)
    near = rng.choice([-3, -2, -1, 1, 2, 3, 15])
    if kind == "word_eq":
        return {"type": kind, "n": max(0, len(words) + (near if miss else 0))}
    if kind == "word_max":
        return {"type": kind, "n": max(0, len(words) - 5 if miss else len(words) + 10)}
    if kind == "word_times":
        n = count_word(ctx, word)
        return {"type": kind, "word": word, "n": n + 1 if miss else n}
    if kind == "sent":
        n = ctx.sentence_count()
        return {"type": kind, "n": max(0, n + (near if miss else 0))}
    if kind == "contains_norm":
        i = rng.randrange(max(1, len(words) - 1))
        text = "purple elephant" if miss else " ".join(words[i : i + 2]).upper()
        return {"type": kind, "text": text}
    if kind == "no_word":
        absent = [w for w in WORDS if count_word(ctx, w) == 0]
        return {"type": kind, "word": word if miss or not absent else rng.choice(absent)}
    if kind == "startswith":
        return {"type": kind, "text": "Dear team," if miss else " ".join(words[:2])}
    if kind == "endswith":
        return {"type": kind, "text": "Kind regards." if miss else words[-1]}
    if kind == "no_char":
        return {"type": kind, "char": rng.choice("aeit") if miss else rng.choice("zqxj")}
    if kind == "para":
        return {"type": kind, "n": ctx.paragraph_count() + (1 if miss else 0)}
    if kind == "bullet":
        return {"type": kind, "n": bullet_count(ctx)}
    if kind == "numbered":
        return {"type": kind, "n": len(numbered_items(ctx))}
    if kind == "numbered_start":
        return {"type": kind, "k": 1}
    if kind == "table_rows":
        return {"type": kind, "n": 4}
    if kind in ("json_keys", "json_keys_any"):
        keys = list(ctx.json().value)
        return {"type": kind, "keys": keys[:2] if kind == "json_keys" else [*keys[:1], "zzz"]}
    if kind == "json_array_len":
        return {"type": kind, "n": 3}
    return {"type": "is_upper"}


def build_pairs(n: int, seed: int = 0) -> list[tuple[str, list[dict]]]:
    """`n` (response, checks) pairs: types drawn with card §5's frequencies, responses of
    20-300 words of prose (plus lists, tables or JSON for the structural types)."""
    rng = random.Random(seed)
    pairs = []
    for _ in range(n):
        types = {t for t, k in CARD_MIX.items() if rng.random() < k / N_PROMPTS}
        if rng.random() < 26 / N_PROMPTS:
            types.add(rng.choice(STRUCTURAL))
        if not types:
            types.add("sent")
        response = response_for(types, rng)
        pairs.append((response, [constraint(t, response, rng) for t in sorted(types)]))
    return pairs


def throughput(pairs: list[tuple[str, list[dict]]], repeat: int, block: int = 250) -> None:
    """Time check() and the bare split in alternating blocks, best of `repeat` per block.

    CPU time of this process (`time.process_time`) rather than wall time, and interleaved
    blocks, so that other load on a shared machine hits both measurements alike.
    """
    stripped = [r.strip() for r, _ in pairs]
    n_constraints = sum(len(c) for _, c in pairs)
    clock = time.process_time
    total_check = total_split = 0.0
    passed = 0
    gc.disable()
    try:
        for lo in range(0, len(pairs), block):
            chunk = pairs[lo : lo + block]
            texts = stripped[lo : lo + block]
            best_check = best_split = float("inf")
            for _ in range(repeat):
                t0 = clock()
                for t in texts:
                    t.split()
                best_split = min(best_split, clock() - t0)
                t0 = clock()
                for r, c in chunk:
                    check(r, c)
                best_check = min(best_check, clock() - t0)
            total_check += best_check
            total_split += best_split
            gc.collect()
    finally:
        gc.enable()
    passed = sum(check(r, c).passed for r, c in pairs[:10_000])
    per_constraint = total_check / n_constraints
    per_split = total_split / len(pairs)
    mean_words = sum(len(t.split()) for t in stripped) / len(stripped)
    print(
        f"pairs: {len(pairs):,}  constraints: {n_constraints:,}  "
        f"({n_constraints / len(pairs):.2f} per pair, mean {mean_words:.0f} words/response)"
    )
    print(
        f"check(): {total_check:.3f} s CPU -> {n_constraints / total_check:,.0f} constraints/s, "
        f"{per_constraint * 1e6:.2f} us per constraint "
        f"(prompt pass rate {passed / min(len(pairs), 10_000):.1%})"
    )
    print(f"t.split(): {total_split:.3f} s CPU -> {per_split * 1e6:.2f} us per response")
    print(
        f"cost per judged constraint / one bare t.split(): {per_constraint / per_split:.2f}"
        "  (target <= 1.5)"
    )


HOSTILE_ALPHABETS = {
    "no newlines": ".[|- ",
    "with newlines": ".[|- \n",
    # Combining marks of classes 230, 220 and 1 (NFKC must reorder them), U+0344 (two marks),
    # characters NFKC expands (ǅ -> Dž, ﬁ -> fi) and U+2028 (white space).
    "unicode marks": "\u0301\u0316\u0334\u0344ǅﬁ\u2028a.",
}


def hostile(alphabet: str) -> str:
    """10 MB of runs of the alphabet's characters, of lengths from 1 to 100,000."""
    rng = random.Random(1)
    parts, size = [], 0
    while size < 10_000_000:
        k = rng.choice([1, 2, 3, 50, 1000, 100_000])
        parts.append(rng.choice(alphabet) * k)
        size += k
    return "".join(parts)[:10_000_000]


def worst_case() -> None:
    """Judge each 10 MB hostile response on every check type, in one call and one call per type.

    Reports CPU time of this process (robust to other load on a shared machine) and wall time.
    """
    examples = []
    for name, ct in sorted(REGISTRY.items()):
        c = {"type": name}
        c.update({p.name: p.example for p in ct.params if p.required})
        examples.append(c)
    for label, alphabet in HOSTILE_ALPHABETS.items():
        resp = hostile(alphabet)
        c0 = time.process_time()
        resp.strip().split()
        split_cpu = time.process_time() - c0
        w0, c0 = time.perf_counter(), time.process_time()
        v = check(resp, examples)
        one_cpu, one_wall = time.process_time() - c0, time.perf_counter() - w0
        sep_cpu = sep_wall = 0.0
        slowest = ("", 0.0)
        for c in examples:
            w0, c0 = time.perf_counter(), time.process_time()
            check(resp, [c])
            dt = time.process_time() - c0
            sep_wall += time.perf_counter() - w0
            sep_cpu += dt
            slowest = max(slowest, (c["type"], dt), key=lambda x: x[1])
        print(
            f"10 MB hostile response ({label}), all {len(examples)} check types "
            f"(target < 1 s): one call {one_cpu:.3f} s CPU ({one_wall:.3f} s wall, "
            f"{one_cpu / split_cpu:.0f}x one t.split()); "
            f"one call per type {sep_cpu:.3f} s CPU ({sep_wall:.3f} s wall), slowest "
            f"{slowest[0]} {slowest[1] * 1000:.0f} ms; {sum(r.passed for r in v.results)} passed"
        )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--pairs", type=int, default=100_000)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    t0 = time.perf_counter()
    pairs = build_pairs(args.pairs)
    print(f"built {len(pairs):,} pairs in {time.perf_counter() - t0:.1f} s")
    throughput(pairs, args.repeat)
    worst_case()


if __name__ == "__main__":
    main()
