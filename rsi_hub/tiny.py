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


def _special_tokens_in_id_order() -> list[str]:
    by_id = {token_id: token for token, token_id in SPECIAL_TOKEN_IDS.items()}
    by_id.update({token_id: reserved_token(token_id) for token_id in RESERVED_TOKEN_IDS})
    assert sorted(by_id) == list(range(len(by_id))), "special ids must be contiguous from 0"
    return [by_id[i] for i in range(len(by_id))]


def build_tiny_tokenizer() -> Any:
    """Train the tiny byte-level BPE tokenizer on the shipped corpus; special tokens at real ids."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    corpus = resource_path("tiny_corpus.txt").read_text("utf-8")
    lines = [*corpus.splitlines(), load_system_prompt(), "user assistant system"]
    tokenizer = Tokenizer(models.BPE(unk_token=UNK_TOKEN))
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=TINY_VOCAB_SIZE,
        special_tokens=_special_tokens_in_id_order(),
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tokenizer.train_from_iterator(lines, trainer=trainer)
    return PreTrainedTokenizerFast(
        tokenizer_object=tokenizer,
        bos_token=BOS_TOKEN,
        eos_token=IM_END_TOKEN,
        unk_token=UNK_TOKEN,
        pad_token=PAD_TOKEN,
    )


def tiny_config(vocab_size: int) -> Any:
    """The `NemotronHConfig` of the tiny checkpoint (a few hundred thousand parameters)."""
    from transformers import NemotronHConfig

    return NemotronHConfig(
        vocab_size=vocab_size,
        hidden_size=64,
        layers_block_type=list(TINY_LAYERS),
        num_attention_heads=4,
        num_key_value_heads=2,
        head_dim=16,
        max_position_embeddings=8192,
        intermediate_size=128,
        ssm_state_size=16,
        mamba_num_heads=4,
        mamba_head_dim=32,
        n_groups=1,
        chunk_size=32,
        n_routed_experts=4,
        num_experts_per_tok=2,
        n_shared_experts=1,
        moe_intermediate_size=64,
        moe_shared_expert_intermediate_size=64,
        pad_token_id=SPECIAL_TOKEN_IDS[PAD_TOKEN],
        bos_token_id=SPECIAL_TOKEN_IDS[BOS_TOKEN],
        eos_token_id=list(STOP_TOKEN_IDS),
        tie_word_embeddings=False,
    )


def build_tiny(out_dir: str | Path, *, seed: int = 0, force: bool = False) -> Path:
    """Build the tiny checkpoint into `out_dir` as a run directory and return its path.

    The same seed gives the same bytes. Takes seconds on a CPU.

    Args:
        out_dir: where to write; created if missing.
        seed: seeds the random initialisation of the weights.
        force: replace the contents of a non-empty `out_dir`.

    Raises:
        OutputDirNotEmptyError: `out_dir` holds files and `force` is false.
    """
    import torch
    from transformers import NemotronHForCausalLM

    out = Path(out_dir)
    refuse_non_empty(out, force=force)
    staging = fresh_staging_dir(out, "building")

    tokenizer = build_tiny_tokenizer()
    config = tiny_config(len(tokenizer))
    torch.manual_seed(seed)
    model = NemotronHForCausalLM(config)
    model.save_pretrained(staging)
    tokenizer.save_pretrained(staging)
    write_serving_files(staging)
    TrainingEvidence(
        kind="tiny random-init checkpoint (the embedded default); never trained",
        base_model=None,
        seed=seed,
        optimizer_steps=0,
        libraries=library_versions(),
        extra={
            "note": "Random weights for testing code paths on a CPU; its outputs are meaningless.",
            "model_type": config.model_type,
            "layers_block_type": list(TINY_LAYERS),
            "parameters": sum(p.numel() for p in model.parameters()),
            "vocab_size": len(tokenizer),
        },
    ).write(staging)
    swap_in(staging, out)
    return out
