"""FP32 master weights with BF16 Adam moments, weight-decay exemptions, FP32 router on save."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import torch
from safetensors.torch import load_file

from rsi_hub.train.precision import (
    BF16MomentAdamW,
    cast_saved_weights,
    keep_fp32_patterns,
    no_decay_parameter_names,
)


def test_float32_state_matches_torch_adamw() -> None:
    torch.manual_seed(0)
    reference = torch.nn.Parameter(torch.randn(32, 32))
    ours = torch.nn.Parameter(reference.detach().clone())
    opt_ref = torch.optim.AdamW([reference], lr=1e-2, weight_decay=0.1)
    opt = BF16MomentAdamW([ours], lr=1e-2, weight_decay=0.1, state_dtype=torch.float32)
    for _ in range(10):
        grad = torch.randn(32, 32)
        reference.grad, ours.grad = grad.clone(), grad.clone()
        opt_ref.step()
        opt.step()
    assert torch.allclose(reference, ours, atol=1e-5)


def test_bf16_moments_fp32_weights_and_small_updates_land() -> None:
    # At LR 3e-6 a BF16 weight would not move at all; the FP32 master weight does.
    weight = torch.nn.Parameter(torch.ones(64))
    opt = BF16MomentAdamW([weight], lr=3e-6)
    weight.grad = torch.full((64,), 0.5)
    opt.step()
    state = opt.state[weight]
    assert state["exp_avg"].dtype == state["exp_avg_sq"].dtype == torch.bfloat16
    assert weight.dtype == torch.float32
    assert torch.all(weight < 1.0)
    assert torch.all(weight.to(torch.bfloat16) == 1.0)  # ...what pure BF16 weights would keep


def test_stochastic_rounding_lets_bf16_moments_decay() -> None:
    # 0.999 x 1.0 rounds back to 1.0 in BF16: round-to-nearest moments never decay.
    results = {}
    for stochastic in (True, False):
        torch.manual_seed(0)
        param = torch.nn.Parameter(torch.zeros(4096))
        opt = BF16MomentAdamW([param], lr=0.0, stochastic_rounding=stochastic)
        param.grad = torch.zeros(4096)
        opt.step()
        opt.state[param]["exp_avg_sq"].fill_(1.0)
        for _ in range(300):
            opt.step()
        results[stochastic] = opt.state[param]["exp_avg_sq"].float().mean().item()
    assert abs(results[True] - 0.999**300) < 0.01
    assert results[False] == 1.0


def test_resumed_state_stays_bf16() -> None:
    param = torch.nn.Parameter(torch.randn(8))
    opt = BF16MomentAdamW([param])
    param.grad = torch.randn(8)
    opt.step()
    saved = opt.state_dict()
    fresh = BF16MomentAdamW([param])
    fresh.load_state_dict(saved)  # torch casts state to the FP32 param dtype; we cast back
    assert fresh.state[param]["exp_avg"].dtype == torch.bfloat16
    assert torch.equal(fresh.state[param]["exp_avg"], opt.state[param]["exp_avg"])


def test_weight_decay_exemptions_on_the_tiny_model(tiny_run: Path) -> None:
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(tiny_run)
    exempt = no_decay_parameter_names(model)
    for name, _ in model.named_parameters():
        leaf = name.rsplit(".", 1)[-1]
        is_norm = ".norm." in name or name.startswith("model.norm_f.") or ".mixer.norm." in name
        expected = leaf in {"A_log", "D"} or "bias" in leaf or is_norm
        assert (name in exempt) == expected, name
    assert "model.norm_f.weight" in exempt  # missed by transformers' default name patterns
    assert "model.layers.1.mixer.gate.weight" not in exempt


def test_final_weights_cast_keeps_router_fp32(tiny_run: Path, tmp_path: Path) -> None:
    from transformers import NemotronHForCausalLM

    folder = tmp_path / "run"
    shutil.copytree(tiny_run, folder)
    patterns = keep_fp32_patterns(NemotronHForCausalLM)
    assert patterns == ["e_score_correction_bias", "gate.weight"]
    assert cast_saved_weights(folder, "bfloat16", patterns) > 0
    tensors = load_file(str(folder / "model.safetensors"))
    for name, tensor in tensors.items():
        want = torch.float32 if any(p in name for p in patterns) else torch.bfloat16
        assert tensor.dtype == want, name
    assert json.loads((folder / "config.json").read_text())["dtype"] == "bfloat16"
