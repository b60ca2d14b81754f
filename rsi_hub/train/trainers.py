"""TRL trainers with the card's precision, conversion-aware resume, and the SimPO tokenisation fix.

`RsiSFTTrainer` is TRL's `SFTTrainer`, `RsiSimPOTrainer` is `trl.experimental.cpo.CPOTrainer`
and `RsiGRPOTrainer` is TRL's `GRPOTrainer` (RLVR); each creates a `BF16MomentAdamW` over two
parameter groups (weight decay / none for `A_log`, `D`, norms and biases). The optimizer is
created by the trainer, after accelerate has prepared the model, so FSDP2 sharding works
(passing a ready optimizer through `optimizers=` is refused with FSDP).

Resume: transformers saves `nemotron_h` checkpoints in the original key layout (`backbone.*`,
one tensor per expert) but `Trainer._load_from_checkpoint` loads them back with a plain
`load_state_dict`, which matches no key, only warns, and resumes from the *initial* weights.
Outside FSDP (whose sharded checkpoints keep the model's own keys) the checkpoint is therefore
loaded through `from_pretrained`, which applies the key conversion, and copied in strictly.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import torch
from transformers.trainer_pt_utils import LengthGroupedSampler
from trl import GRPOTrainer, SFTTrainer

# CPOTrainer lives in trl.experimental in TRL 1.16 (DESIGN.md); it is used knowingly.
os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")
from trl.experimental.cpo import CPOTrainer

from rsi_hub.chat import BOS_TOKEN
from rsi_hub.train.fsdp import enable_fsdp_on_cpu
from rsi_hub.train.lm_head import full_logits_lm_head, needs_full_logits_head
from rsi_hub.train.precision import BF16MomentAdamW, decay_parameter_names


class _RsiTrainerMixin:
    """Adds the FP32-master / BF16-moment AdamW, the weight-decay exemptions and a resume that
    loads converted checkpoints correctly to a TRL trainer."""

    optimizer: Any
    optimizer_cls_and_kwargs: Any
    args: Any
    accelerator: Any
    model: Any
    is_fsdp_enabled: bool

    def __init__(
        self, *args: Any, optimizer_state_dtype: torch.dtype = torch.bfloat16, **kwargs: Any
    ) -> None:
        self.optimizer_state_dtype = optimizer_state_dtype
        super().__init__(*args, **kwargs)

    def create_accelerator_and_postprocess(self) -> None:
        """transformers' accelerator set-up, with FSDP kept on CPU processes (`train.fsdp`)."""
        super().create_accelerator_and_postprocess()  # type: ignore[misc]
        if enable_fsdp_on_cpu(self.accelerator):
            # Built again on the FSDP state, so that every FSDP branch of accelerate's and
            # transformers' set-up (plugin checks, is_fsdp_enabled) runs as on a GPU.
            super().create_accelerator_and_postprocess()  # type: ignore[misc]

    def get_decay_parameter_names(self, model: torch.nn.Module) -> list[str]:
        """Every parameter except `A_log`, `D`, norms and biases."""
        return decay_parameter_names(model)

    def create_optimizer(self, model: Any = None) -> torch.optim.Optimizer:
        """Build `BF16MomentAdamW` with the trainer's param groups, LR, betas and epsilon."""
        if self.optimizer is None:
            self.optimizer_cls_and_kwargs = (
                BF16MomentAdamW,
                {
                    "lr": self.args.learning_rate,
                    "betas": (self.args.adam_beta1, self.args.adam_beta2),
                    "eps": self.args.adam_epsilon,
                    "state_dtype": self.optimizer_state_dtype,
                },
            )
        return super().create_optimizer(model)  # type: ignore[misc]

    def _load_from_checkpoint(self, resume_from_checkpoint: str, model: Any = None) -> None:
        # See the module docstring: plain load_state_dict misses every converted key.
        checkpoint = Path(resume_from_checkpoint)
        if self.is_fsdp_enabled or not (checkpoint / "config.json").is_file():
            super()._load_from_checkpoint(resume_from_checkpoint, model)  # type: ignore[misc]
            return
        target = self.accelerator.unwrap_model(model if model is not None else self.model)
        dtype = next(target.parameters()).dtype
        loaded = type(target).from_pretrained(str(checkpoint), dtype=dtype)
        target.load_state_dict(loaded.state_dict(), strict=True)
        del loaded


class RsiSFTTrainer(_RsiTrainerMixin, SFTTrainer):
    """TRL `SFTTrainer` with the card's optimizer precision.

    Train it on prepared rows (`input_ids`, `assistant_masks`): TRL turns the mask into labels
    (-100 outside assistant answers) and leaves the tokens alone. Where TRL's fused LM head has
    no kernel (CPU), the loss's head scores the supervised positions from full logits instead
    (`rsi_hub.train.lm_head`: the same loss and metrics, 1.75x faster steps on the nano model).
    """

    def __init__(self, *args: Any, length_grouping: int = 1, **kwargs: Any) -> None:
        self.length_grouping = length_grouping
        super().__init__(*args, **kwargs)
        if needs_full_logits_head(self.args.device):
            from peft import PeftModel

            model = self.model
            full_logits_lm_head(model.get_base_model() if isinstance(model, PeftModel) else model)

    def _get_train_sampler(self, train_dataset: Any = None) -> Any:
        """transformers' sampler, with `length_grouping` batches per length-sorted pool."""
        sampler = super()._get_train_sampler(train_dataset)
        if self.length_grouping > 1 and isinstance(sampler, LengthGroupedSampler):
            return PooledLengthSampler(sampler, self.length_grouping)
        return sampler


class PooledLengthSampler(torch.utils.data.Sampler):
    """`LengthGroupedSampler` with mega-batches of `pool` batches instead of up to 50."""

    def __init__(self, grouped: LengthGroupedSampler, pool: int) -> None:
        self.grouped = grouped
        self.pool = pool

    def __len__(self) -> int:
        return len(self.grouped)

    def __iter__(self) -> Any:
        from transformers.trainer_pt_utils import get_length_grouped_indices

        g = self.grouped
        return iter(
            get_length_grouped_indices(
                g.lengths, g.batch_size, mega_batch_mult=self.pool, generator=g.generator
            )
        )


class RsiSimPOTrainer(_RsiTrainerMixin, CPOTrainer):
    """TRL `CPOTrainer` (configure `loss_type="simpo"`, `cpo_alpha=0`) with the card's precision.

    Rows are pre-rendered strings (`rsi_hub.data.render_preference`). CPOTrainer still puts the
    tokenizer's BOS in front of every prompt; the served template never starts with `<s>`, so
    `tokenize_row` takes it off again: the model is trained on exactly what it sees when served.
    """

    def tokenize_row(self, feature: dict[str, Any], model: Any = None) -> dict[str, Any]:
        """CPOTrainer's tokenisation minus the BOS it prepends to prompts that have none."""
        batch = super().tokenize_row(feature, model)
        bos = self.processing_class.bos_token_id
        if bos is None or feature["prompt"].startswith(BOS_TOKEN):
            return batch
        for prefix, ids_key in (("prompt_", "prompt_input_ids"), ("chosen_", "chosen_input_ids"),
                                ("rejected_", "rejected_input_ids")):  # fmt: skip
            if batch.get(ids_key) and batch[ids_key][0] == bos:
                for key in list(batch):
                    if key.startswith(prefix) and isinstance(batch[key], list) and batch[key]:
                        batch[key] = batch[key][1:]
        return batch


class RsiGRPOTrainer(_RsiTrainerMixin, GRPOTrainer):
    """TRL `GRPOTrainer` (RLVR, `reward_funcs=[CheckerReward(...)]`) with the card's precision
    and the conversion-aware resume of the other trainers."""
