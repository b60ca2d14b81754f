"""The CPU LM head of the SFT loss equals TRL's fused head; length-grouped batches.

`rsi_hub.train.lm_head` replaces TRL's fused LM head on devices without Triton. It must give
the very loss, gradients and per-token fields TRL's own head gives, on a real batch of a real
trainer (padding, prompt positions masked out, several rows).
"""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
import torch

from rsi_hub.train import build_trainer, load_recipe
from rsi_hub.train.lm_head import (
    full_logits_lm_head,
    has_full_logits_head,
    needs_full_logits_head,
)
from tests.test_train_run import HOLDOUT


def _prepared(tiny_run: Path, tmp_path: Path, **overrides: object):
    recipe = load_recipe(
        "smoke",
        {"model": str(tiny_run), "output_dir": str(tmp_path / "run"), **overrides},
        trainer="sft",
    )
    return build_trainer(recipe, holdout_matcher=HOLDOUT)


def _batch(trainer) -> dict[str, torch.Tensor]:
    batch = next(iter(trainer.get_train_dataloader()))
    return {k: v for k, v in batch.items() if isinstance(v, torch.Tensor)}


def test_the_cpu_head_is_installed_where_trl_has_no_kernel(tiny_run: Path, tmp_path: Path) -> None:
    assert needs_full_logits_head(torch.device("cpu"))
    run = _prepared(tiny_run, tmp_path)
    assert has_full_logits_head(run.trainer.model)


def test_loss_gradients_and_fields_equal_trls_fused_head(tiny_run: Path, tmp_path: Path) -> None:
    from trl.trainer.utils import add_fused_lm_head

    run = _prepared(tiny_run, tmp_path, per_device_train_batch_size=4)
    ours = run.trainer.model
    batch = _batch(run.trainer)
    # The batch is padded and masked: the two heads differ only if the masking is handled.
    assert (batch["labels"] == -100).any() and (batch["attention_mask"] == 0).any()

    trls = copy.deepcopy(ours)
    trls.forward = type(trls).forward.__get__(trls)  # unpatched, then TRL's fused head only
    add_fused_lm_head(trls, outputs=("log_probs", "entropy", "is_top1"))

    results = []
    for model in (ours, trls):
        model.zero_grad()
        out = model(**batch, fused_lm_head=True, use_cache=False)
        out.loss.backward()
        grads = {
            n: p.grad.detach().clone() for n, p in model.named_parameters() if p.grad is not None
        }
        results.append((out, grads))
    (a, grads_a), (b, grads_b) = results
    assert torch.allclose(a.loss, b.loss, atol=1e-6), (a.loss, b.loss)
    assert torch.equal(a.label_mask, b.label_mask)
    assert torch.allclose(a.log_probs, b.log_probs, atol=1e-5)
    assert torch.allclose(a.entropy, b.entropy, atol=1e-4)
    assert torch.equal(a.is_top1, b.is_top1)
    assert grads_a.keys() == grads_b.keys() and len(grads_a) > 10
    for name, grad in grads_a.items():
        assert torch.allclose(grad, grads_b[name], atol=1e-6, rtol=1e-4), name


def test_num_items_in_batch_divides_the_summed_loss(tiny_run: Path, tmp_path: Path) -> None:
    # Gradient accumulation passes the token count of the whole step: the loss is a sum over
    # this micro-batch's supervised tokens divided by it, as in TRL.
    run = _prepared(tiny_run, tmp_path, per_device_train_batch_size=2)
    batch = _batch(run.trainer)
    model = run.trainer.model
    with torch.no_grad():
        mean = model(**batch, fused_lm_head=True).loss
        summed = model(**batch, fused_lm_head=True, num_items_in_batch=torch.tensor(1)).loss
    tokens = int((batch["labels"][:, 1:] != -100).sum())
    assert torch.allclose(summed, mean * tokens, rtol=1e-5)


def test_plain_calls_still_reach_the_model(tiny_run: Path, tmp_path: Path) -> None:
    # Generation and evaluation call the model without `fused_lm_head`: logits, as before.
    run = _prepared(tiny_run, tmp_path)
    batch = _batch(run.trainer)
    with torch.no_grad():
        out = run.trainer.model(
            input_ids=batch["input_ids"], attention_mask=batch["attention_mask"]
        )
    assert out.logits.shape[:2] == batch["input_ids"].shape


def test_full_logits_head_wraps_any_patched_model(tiny_run: Path) -> None:
    from transformers import AutoModelForCausalLM
    from trl.trainer.utils import add_fused_lm_head

    model = AutoModelForCausalLM.from_pretrained(tiny_run)
    add_fused_lm_head(model, outputs=("log_probs", "entropy", "is_top1"))
    full_logits_lm_head(model)
    ids = torch.tensor([[1, 20, 21, 22, 23]])
    labels = torch.tensor([[-100, -100, 21, 22, 23]])
    out = model(input_ids=ids, labels=labels, fused_lm_head=True)
    assert out.label_mask.tolist() == [[False, True, True, True]]
    assert out.log_probs[0, 0] == 0 and out.log_probs[0, 1:].lt(0).all()


def _rows(trainer) -> list[tuple[int, ...]]:
    return sorted(
        tuple(ids[: int(mask.sum())])
        for b in trainer.get_train_dataloader()
        for ids, mask in zip(b["input_ids"].tolist(), b["attention_mask"], strict=True)
    )


def _padding(trainer) -> int:
    return sum(int((b["attention_mask"] == 0).sum()) for b in trainer.get_train_dataloader())


def test_length_grouping_pools_batches_that_pad_less(tiny_run: Path, tmp_path: Path) -> None:
    from rsi_hub.train.trainers import PooledLengthSampler

    def built(name: str, grouping: int):
        return _prepared(
            tiny_run, tmp_path / name, per_device_train_batch_size=4, length_grouping=grouping
        ).trainer

    plain, pooled, again = built("a", 1), built("b", 2), built("c", 2)
    assert plain.args.train_sampling_strategy == "random"
    assert isinstance(pooled._get_train_sampler(), PooledLengthSampler)
    # Same rows, same seed: pools of 2 batches are sorted by length before they are cut, so the
    # shipped demo chats pad less; the order is the seed's, run after run.
    assert _padding(pooled) < 0.8 * _padding(plain)
    # (The trainer seeds torch when training starts; the sampler draws from that generator.)
    torch.manual_seed(0)
    order = [b["input_ids"].tolist() for b in pooled.get_train_dataloader()]
    torch.manual_seed(0)
    assert order == [b["input_ids"].tolist() for b in again.get_train_dataloader()]
    # Every row once, as in random order (rows unpadded: padding is on the right).
    assert _rows(pooled) == _rows(plain)


@pytest.mark.parametrize("bad", [{"length_grouping": 0}, {"length_grouping": 4, "packing": True}])
def test_length_grouping_is_refused_where_it_cannot_apply(bad: dict, tmp_path: Path) -> None:
    from rsi_hub.errors import RecipeError

    with pytest.raises(RecipeError, match="length_grouping"):
        load_recipe("smoke", {**bad, "output_dir": str(tmp_path)}, trainer="sft")
