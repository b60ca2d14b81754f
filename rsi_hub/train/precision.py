"""Precision as the card means it: FP32 master weights, BF16 Adam moments, FP32 router tensors.

"AdamW with BF16 optimizer state" is not pure BF16 training: at LR 3e-6 a BF16 weight barely
moves (an update is far below half a BF16 ulp of the weight and rounds away). The weights stay
FP32 (the model is loaded in FP32; compute runs in BF16 autocast or FSDP mixed precision) and
only the two Adam moments are stored in BF16, which halves optimizer memory.

Storing a moment in BF16 with round-to-nearest has the same stall in slow motion: with
beta2 = 0.999 each step changes `exp_avg_sq` by 0.1 %, below half a BF16 ulp (0.2-0.4 %), so it
would never decay. The moments are therefore written back with stochastic rounding, which is
unbiased: on average the stored value follows the FP32 recurrence.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import torch

# Parameter names never decayed (besides norms and biases): the Mamba decay and skip tensors.
NO_DECAY_NAMES = ("A_log", "D")
DTYPE_BY_NAME = {"bfloat16": torch.bfloat16, "float32": torch.float32}


def no_decay_parameter_names(model: torch.nn.Module) -> set[str]:
    """Names of parameters exempt from weight decay: `A_log`, `D`, every norm and every bias.

    A norm is any module whose class name contains "norm" (RMSNorm, the gated RMSNorm of the
    Mamba mixer, LayerNorm), so `norm_f` is covered too, which name patterns alone miss.
    """
    names: set[str] = set()
    for module_name, module in model.named_modules():
        is_norm = "norm" in type(module).__name__.lower()
        for param_name, _ in module.named_parameters(recurse=False):
            full = f"{module_name}.{param_name}" if module_name else param_name
            if is_norm or param_name in NO_DECAY_NAMES or "bias" in param_name:
                names.add(full)
    return names


def decay_parameter_names(model: torch.nn.Module) -> list[str]:
    """Names of the parameters that weight decay applies to (all others of `model`)."""
    exempt = no_decay_parameter_names(model)
    return [name for name, _ in model.named_parameters() if name not in exempt]


def stochastic_round_to_bf16(value: torch.Tensor, out: torch.Tensor) -> None:
    """Write FP32 `value` into BF16 `out`, rounding up or down with probability by distance.

    BF16 is the top 16 bits of an FP32; adding uniform noise to the low 16 bits before cutting
    them rounds up with probability equal to the discarded fraction.
    """
    bits = value.view(torch.int32)
    noise = torch.randint_like(bits, 0, 1 << 16)
    rounded = (bits + noise).bitwise_and_(-65536)  # 0xFFFF0000: keep the BF16 bits
    out.copy_(rounded.view(torch.float32))


def _local(tensor: torch.Tensor) -> torch.Tensor:
    # FSDP2 shards parameters as DTensors; the update is elementwise, so work on the local shard.
    to_local = getattr(tensor, "to_local", None)
    return to_local() if to_local is not None else tensor


class BF16MomentAdamW(torch.optim.Optimizer):
    """AdamW (decoupled weight decay) that keeps its moments in `state_dtype` (BF16 by default).

    Parameters and gradients stay in their own dtype (FP32 master weights). Each step upcasts
    the moments to FP32, updates them and the weights in FP32, and stores the moments back,
    with stochastic rounding when the state is BF16.

    Args:
        params: parameters or parameter groups (each group may set its own `weight_decay`).
        lr: learning rate.
        betas: Adam's beta1 and beta2.
        eps: added to the denominator.
        weight_decay: decoupled weight decay coefficient.
        state_dtype: dtype of `exp_avg` and `exp_avg_sq`.
        stochastic_rounding: round BF16 moments stochastically (see the module docstring).
    """

    def __init__(
        self,
        params: Iterable[Any],
        lr: float = 1e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0.0,
        state_dtype: torch.dtype = torch.bfloat16,
        stochastic_rounding: bool = True,
    ) -> None:
        if lr < 0 or eps < 0 or weight_decay < 0 or not all(0.0 <= b < 1.0 for b in betas):
            raise ValueError(
                f"invalid AdamW settings lr={lr} betas={betas} eps={eps} wd={weight_decay}"
            )
        defaults = {"lr": lr, "betas": tuple(betas), "eps": eps, "weight_decay": weight_decay}
        super().__init__(params, defaults)
        self.state_dtype = state_dtype
        self.stochastic_rounding = stochastic_rounding

    def _store(self, value: torch.Tensor, out: torch.Tensor) -> None:
        if out.dtype == torch.bfloat16 and self.stochastic_rounding:
            stochastic_round_to_bf16(value, out)
        else:
            out.copy_(value)

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Load a checkpoint, keeping the moments in `state_dtype`.

        `torch.optim.Optimizer.load_state_dict` casts floating state to the parameter's dtype
        (FP32); cast the moments back so a resumed run keeps BF16 state (exactly: BF16 to FP32
        and back is lossless).
        """
        super().load_state_dict(state_dict)
        for state in self.state.values():
            for key in ("exp_avg", "exp_avg_sq"):
                if key in state and state[key].dtype != self.state_dtype:
                    state[key] = state[key].to(self.state_dtype)

    @torch.no_grad()
    def step(self, closure: Any = None) -> Any:
        """One AdamW step over every parameter with a gradient."""
        loss = None
        if closure is not None:
            with torch.enable_grad():
                loss = closure()
        for group in self.param_groups:
            beta1, beta2 = group["betas"]
            lr, eps, weight_decay = group["lr"], group["eps"], group["weight_decay"]
            for param in group["params"]:
                if param.grad is None:
                    continue
                state = self.state[param]
                if not state:
                    state["step"] = torch.tensor(0.0)
                    state["exp_avg"] = torch.zeros_like(param, dtype=self.state_dtype)
                    state["exp_avg_sq"] = torch.zeros_like(param, dtype=self.state_dtype)
                state["step"] += 1
                step = float(state["step"])
                weight = _local(param)
                grad = _local(param.grad).float()
                exp_avg_out, exp_avg_sq_out = _local(state["exp_avg"]), _local(state["exp_avg_sq"])
                exp_avg = exp_avg_out.float().lerp_(grad, 1.0 - beta1)
                exp_avg_sq = (
                    exp_avg_sq_out.float().mul_(beta2).addcmul_(grad, grad, value=1.0 - beta2)
                )
                self._store(exp_avg, exp_avg_out)
                self._store(exp_avg_sq, exp_avg_sq_out)

                bias_correction1 = 1.0 - beta1**step
                bias_correction2 = 1.0 - beta2**step
                denom = (exp_avg_sq.sqrt() / math.sqrt(bias_correction2)).add_(eps)
                # Not in place: with FP32 state `exp_avg` is the stored moment itself.
                update = (exp_avg / denom).mul_(lr / bias_correction1)
                if weight_decay:
                    update.add_(weight.float(), alpha=lr * weight_decay)
                weight.sub_(update.to(weight.dtype))
        return loss


def keep_fp32_patterns(model_or_class: Any) -> list[str]:
    """Name patterns whose tensors stay FP32 whatever the dtype (the MoE router of nemotron_h)."""
    patterns = set(getattr(model_or_class, "_keep_in_fp32_modules_strict", None) or ())
    patterns |= set(getattr(model_or_class, "_keep_in_fp32_modules", None) or ())
    return sorted(patterns)


def cast_saved_weights(folder: str | Path, dtype: str, keep_fp32: list[str]) -> int:
    """Rewrite the safetensors weights of `folder` in `dtype`, keeping `keep_fp32` tensors FP32.

    Training keeps FP32 master weights, so checkpoints are FP32; the card's release is BF16
    except the router's FP32 tensors (`gate.weight`, `e_score_correction_bias`), which
    transformers also keeps FP32 on load. Updates `config.json` (`dtype`) and the shard index.

    Returns:
        The number of tensors cast.
    """
    from safetensors.torch import load_file, save_file

    folder = Path(folder)
    target = DTYPE_BY_NAME[dtype]
    cast = 0
    total_size = 0
    for shard in sorted(folder.glob("model*.safetensors")):
        tensors = load_file(str(shard))
        for name, tensor in tensors.items():
            if (
                tensor.is_floating_point()
                and tensor.dtype != target
                and not any(p in name for p in keep_fp32)
            ):
                tensors[name] = tensor.to(target)
                cast += 1
            total_size += tensors[name].numel() * tensors[name].element_size()
        save_file(tensors, str(shard), metadata={"format": "pt"})
    config_path = folder / "config.json"
    if config_path.is_file():
        config = json.loads(config_path.read_text(encoding="utf-8"))
        config["dtype"] = dtype
        config_path.write_text(
            json.dumps(config, indent=2, sort_keys=True) + "\n", encoding="utf-8"
        )
    index_path = folder / "model.safetensors.index.json"
    if index_path.is_file():
        index = json.loads(index_path.read_text(encoding="utf-8"))
        index.setdefault("metadata", {})["total_size"] = total_size
        index_path.write_text(json.dumps(index, indent=2) + "\n", encoding="utf-8")
    return cast
