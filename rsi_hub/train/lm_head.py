"""The SFT loss's LM head on devices without Triton (CPU): score only the supervised positions.

TRL 1.16's `SFTTrainer` patches the model with a fused LM head (`trl.trainer.utils.
add_fused_lm_head`) that returns per-token log-probabilities without building the full logits.
On CUDA it runs a Triton kernel on the supervised positions only. Without Triton it folds every
position of the padded batch (prompt and padding included) through a tiled torch fallback of an
online log-sum-exp: on the nano model (4,096-token vocabulary, 44 % of tokens supervised, 1.75x
padding) that costs 0.45 s of a 0.9 s step, more than the whole backbone.

`full_logits_lm_head` wraps TRL's patched forward: for a plain `fused_lm_head=True` call it runs
the backbone, projects the supervised positions through the LM head, and returns TRL's own
`FusedCausalLMOutput` with the same fields, so TRL's `compute_loss` (loss normalisation, token
counts, entropy and accuracy metrics) runs unchanged. At a small vocabulary the full logits of
the supervised positions are cheap to hold. Calls it does not cover (MoE aux loss, pre-shifted
labels, FSDP's sharded LM head) go to TRL's forward as before.
"""

from __future__ import annotations

import functools
import types
from typing import Any

import torch

IGNORE_INDEX = -100


def needs_full_logits_head(device: torch.device) -> bool:
    """True where TRL's fused head has no kernel and falls back to its slow torch tiles."""
    from trl.trainer.utils import _use_triton

    return not _use_triton(device)


def full_logits_lm_head(model: Any) -> None:
    """Replace the plain path of TRL's fused LM head on `model` by full logits of the supervised
    positions (see the module docstring). Call after TRL has patched the model."""
    from torch.distributed.tensor import DTensor
    from trl.trainer.utils import FusedCausalLMOutput

    fused_forward = model.forward  # TRL's `_fused_forward`, bound to the model

    @functools.wraps(type(model).forward)
    def forward(
        self: Any,
        *args: Any,
        fused_lm_head: bool = False,
        labels: torch.Tensor | None = None,
        shift_labels: torch.Tensor | None = None,
        num_items_in_batch: Any = None,
        **kwargs: Any,
    ) -> Any:
        lm_head = self.get_output_embeddings()
        delegate = (
            not fused_lm_head
            or labels is None
            or shift_labels is not None
            or kwargs.get("output_router_logits")
            or isinstance(lm_head.weight, DTensor)
        )
        if delegate:
            return fused_forward(
                *args,
                fused_lm_head=fused_lm_head,
                labels=labels,
                shift_labels=shift_labels,
                num_items_in_batch=num_items_in_batch,
                **kwargs,
            )
        kwargs["use_cache"] = False
        hidden = self.base_model(*args, **kwargs).last_hidden_state[:, :-1]
        targets = labels[:, 1:].to(hidden.device)
        mask = targets != IGNORE_INDEX
        # Only the supervised positions reach the head: the rows the loss and metrics read.
        log_all = torch.log_softmax(lm_head(hidden[mask]).float(), dim=-1)
        picked = log_all.gather(-1, targets[mask].unsqueeze(-1)).squeeze(-1)
        with torch.no_grad():
            entropy = -(log_all.exp() * log_all).sum(-1)
            is_top1 = log_all.argmax(-1) == targets[mask]
        # `masked_scatter` keeps a batch without supervised tokens connected (a zero loss).
        log_probs = picked.new_zeros(mask.shape).masked_scatter(mask, picked)
        denominator = mask.sum().clamp(min=1) if num_items_in_batch is None else num_items_in_batch
        return FusedCausalLMOutput(
            loss=-log_probs.sum() / denominator,
            log_probs=log_probs,
            entropy=entropy.new_zeros(mask.shape).masked_scatter(mask, entropy),
            is_top1=is_top1.new_zeros(mask.shape).masked_scatter(mask, is_top1),
            label_mask=mask,
        )

    forward.full_logits_lm_head = True  # type: ignore[attr-defined]
    model.forward = types.MethodType(forward, model)


def has_full_logits_head(model: Any) -> bool:
    """Whether `full_logits_lm_head` patched `model`."""
    return getattr(getattr(model.forward, "__func__", None), "full_logits_lm_head", False)
