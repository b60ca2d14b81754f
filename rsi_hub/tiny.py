"""The embedded default: a tiny random-init `nemotron_h` checkpoint built locally in seconds.

It has every block kind of the 30B model (Mamba, attention, MoE), a byte-level BPE tokenizer
trained on text the package ships with the real special-token ids, and the serving files, saved
as a run directory. Every user command runs on it on a CPU through the same code paths as the
30B model. It has never been trained: its answers are noise until `rsi-hub train` has run on it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rsi_hub.chat import (
    BOS_TOKEN,
    IM_END_TOKEN,
    PAD_TOKEN,
    SPECIAL_TOKEN_IDS,
    STOP_TOKEN_IDS,
    UNK_TOKEN,
    load_system_prompt,
    write_serving_files,
)
from rsi_hub.chat.tokens import RESERVED_TOKEN_IDS, reserved_token
from rsi_hub.rundir import TrainingEvidence, library_versions
from rsi_hub.shipped import resource_path
from rsi_hub.staging import fresh_staging_dir, refuse_non_empty, swap_in

TINY_VOCAB_SIZE = 1024
# Mamba, MoE, attention, MoE: each block kind of the base model, in its interleaving style.
TINY_LAYERS = ["linear_attention", "moe", "full_attention", "moe"]
# The CPU replication's model (`model: nano`): wider, with attention first and twice, because
# copy-type checks (startswith, contains, word_times) need to look a phrase up in the prompt,
# and one Mamba layer only (its CPU fallback costs about 3x an attention layer). Its attention
# is multi-query (one key/value head): generation reads every cached key and value at every
# step, which dominates a 2,048-token answer on a CPU (1.6x faster decoding than four heads), and
# IF-818 after 1,200 steps was the same (46.9 % vs 47.1 %). Mamba first learned less (15.9 % vs
# 25.6 % after 600 steps): tests/bench/README_replicate.md.
NANO_LAYERS = ["full_attention", "moe", "linear_attention", "moe", "full_attention", "moe"]
# Shape of each random-init size: hidden width, layer kinds, attention heads, and its tokenizer:
# vocabulary size and how many generation-pool prompts (besides the shipped corpus and k0) it
# learns merges from. More merges make k0 and the prompts fewer tokens, for training and serving
# alike; the pool excludes every holdout prompt.
SIZES: dict[str, dict[str, Any]] = {
    "tiny": {"hidden_size": 64, "layers": TINY_LAYERS, "heads": 4, "vocab": 1024, "pool": 0},
    "nano": {
        "hidden_size": 256, "layers": NANO_LAYERS, "heads": 8, "kv_heads": 1, "vocab": 4096,
        "pool": 4000, "k0_token": True,
    },
}  # fmt: skip


def _special_tokens_in_id_order() -> list[str]:
    by_id = {token_id: token for token, token_id in SPECIAL_TOKEN_IDS.items()}
    by_id.update({token_id: reserved_token(token_id) for token_id in RESERVED_TOKEN_IDS})
    assert sorted(by_id) == list(range(len(by_id))), "special ids must be contiguous from 0"
    return [by_id[i] for i in range(len(by_id))]


def _pool_lines(n: int) -> list[str]:
    """The first `n` eligible generation-pool prompts and the filler words answers are made of."""
    if n == 0:
        return []
    from rsi_hub.suites.phrasings import FILLER_CLAUSES
    from rsi_hub.suites.prompts import select_prompts

    # k0 once per prompt, as every served conversation carries it: its merges then weigh what
    # they weigh in training and serving.
    k0 = load_system_prompt()
    return [line for p in select_prompts(None, n) for line in (k0, p.prompt)] + [*FILLER_CLAUSES]


def build_tiny_tokenizer(size: str = "tiny") -> Any:
    """Train the byte-level BPE tokenizer of a size (`SIZES`); special tokens at real ids.

    `tiny` learns from the shipped corpus and k0 only; `nano` also from pool prompts.
    """
    from tokenizers import AddedToken, Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    shape = _size(size)
    corpus = resource_path("tiny_corpus.txt").read_text("utf-8")
    lines = [*corpus.splitlines(), load_system_prompt(), "user assistant system"]
    lines += _pool_lines(int(shape["pool"]))
    tokenizer = Tokenizer(models.BPE(unk_token=UNK_TOKEN))
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=int(shape["vocab"]),
        special_tokens=_special_tokens_in_id_order(),
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tokenizer.train_from_iterator(lines, trainer=trainer)
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tokenizer,
        bos_token=BOS_TOKEN,
        eos_token=IM_END_TOKEN,
        unk_token=UNK_TOKEN,
        pad_token=PAD_TOKEN,
    )
    if shape.get("k0_token"):
        # k0 as one added (non-special) token: the tokenizer matches its exact text wherever a
        # conversation carries it, so training and serving still render and tokenise the same
        # string the same way, but a served row costs 1 token of k0 instead of ~126 (about
        # half of an average training row). Any other system prompt is tokenised as usual.
        fast.add_tokens([AddedToken(load_system_prompt(), normalized=False, special=False)])
    return fast


def tiny_config(vocab_size: int, size: str = "tiny") -> Any:
    """The `NemotronHConfig` of a random-init size (`SIZES`): every width follows `hidden_size`.

    `tiny` has a few hundred thousand parameters, `nano` a few million.
    """
    from transformers import NemotronHConfig

    shape = _size(size)
    width, heads = int(shape["hidden_size"]), int(shape["heads"])
    return NemotronHConfig(
        vocab_size=vocab_size,
        hidden_size=width,
        layers_block_type=list(shape["layers"]),
        num_attention_heads=heads,
        num_key_value_heads=int(shape.get("kv_heads", max(1, heads // 2))),
        head_dim=16 if size == "tiny" else width // heads,
        max_position_embeddings=8192,
        intermediate_size=2 * width,
        ssm_state_size=16,
        mamba_num_heads=4 if size == "tiny" else width // 32,
        mamba_head_dim=32 if size == "tiny" else 64,
        n_groups=1,
        chunk_size=32 if size == "tiny" else 64,
        n_routed_experts=4,
        num_experts_per_tok=2,
        n_shared_experts=1,
        moe_intermediate_size=width,
        moe_shared_expert_intermediate_size=width,
        pad_token_id=SPECIAL_TOKEN_IDS[PAD_TOKEN],
        bos_token_id=SPECIAL_TOKEN_IDS[BOS_TOKEN],
        eos_token_id=list(STOP_TOKEN_IDS),
        tie_word_embeddings=False,
    )


def _size(size: str) -> dict[str, Any]:
    if size not in SIZES:
        raise ValueError(f"unknown random-init size {size!r}; choose one of {', '.join(SIZES)}.")
    return SIZES[size]


def build_tiny(
    out_dir: str | Path, *, seed: int = 0, force: bool = False, size: str = "tiny"
) -> Path:
    """Build a random-init checkpoint into `out_dir` as a run directory and return its path.

    The same seed gives the same bytes. Takes seconds on a CPU.

    Args:
        out_dir: where to write; created if missing.
        seed: seeds the random initialisation of the weights.
        force: replace the contents of a non-empty `out_dir`.
        size: `tiny` (the embedded default) or `nano` (the CPU replication's model); see `SIZES`.

    Raises:
        OutputDirNotEmptyError: `out_dir` holds files and `force` is false.
    """
    import torch
    from transformers import NemotronHForCausalLM

    shape = _size(size)
    out = Path(out_dir)
    refuse_non_empty(out, force=force)
    staging = fresh_staging_dir(out, "building")

    tokenizer = build_tiny_tokenizer(size)
    config = tiny_config(len(tokenizer), size)
    torch.manual_seed(seed)
    model = NemotronHForCausalLM(config)
    model.save_pretrained(staging)
    tokenizer.save_pretrained(staging)
    write_serving_files(staging)
    TrainingEvidence(
        kind=f"{size} random-init checkpoint"
        + (" (the embedded default)" if size == "tiny" else "")
        + "; never trained",
        base_model=None,
        seed=seed,
        optimizer_steps=0,
        libraries=library_versions(),
        extra={
            "note": "Random weights for testing code paths on a CPU; its outputs are meaningless.",
            "model_type": config.model_type,
            "size": size,
            "layers_block_type": list(shape["layers"]),
            "parameters": sum(p.numel() for p in model.parameters()),
            "vocab_size": len(tokenizer),
        },
    ).write(staging)
    swap_in(staging, out)
    return out
