"""FSDP2 under `accelerate launch`, on GPUs and on CPU (gloo) processes, and proof that it is on.

accelerate 1.15 turns an FSDP config on CPU processes into something else without a word:

1. its torchrun launcher never exports `ACCELERATE_USE_CPU`, so without CUDA every worker has
   no process group at all and trains the whole run alone (`rsi_hub.distributed` fixes that);
2. with the CPU process group, `AcceleratorState` sets `distributed_type = FSDP` only for GPU-like
   device types: MULTI_CPU keeps MULTI_CPU, the FSDP plugin is dropped and the model is wrapped
   in DDP: every rank holds the full model and nothing is sharded.

`enable_fsdp_on_cpu` restores (2): it builds the plugin from the `FSDP_*` variables the launcher
exported (exactly what accelerate does on a GPU) and marks the shared state FSDP, after which
accelerate's own FSDP2 path (`fully_shard` per `NemotronHBlock`, sharded checkpoints, the full
state dict for the final save) runs unchanged over gloo. `FullyShardedCheck` then refuses to
train when FSDP was asked for and the model that reaches the training loop is not sharded, and
records what it saw for the evidence.
"""

from __future__ import annotations

from typing import Any

from transformers import TrainerCallback

from rsi_hub.distributed import fsdp_requested
from rsi_hub.errors import DistributedSetupError


def enable_fsdp_on_cpu(accelerator: Any) -> bool:
    """Make an FSDP launch on CPU processes FSDP again (accelerate 1.15 demotes it; see above).

    Touches accelerate's shared state, which is why it lives in this one function: on a GPU,
    or when FSDP was not asked for, it does nothing.

    Returns:
        True when the state was changed (the caller must rebuild its `Accelerator`).
    """
    from accelerate.state import AcceleratorState, PartialState
    from accelerate.utils import DistributedType, FullyShardedDataParallelPlugin

    state = accelerator.state
    if not fsdp_requested() or state.distributed_type != DistributedType.MULTI_CPU:
        return False
    plugin = FullyShardedDataParallelPlugin()  # from the launcher's FSDP_* variables
    # What AcceleratorState.__init__ does for MULTI_GPU when ACCELERATE_USE_FSDP is set.
    AcceleratorState._shared_state["distributed_type"] = DistributedType.FSDP
    AcceleratorState._shared_state["fsdp_plugin"] = plugin
    PartialState._shared_state["distributed_type"] = DistributedType.FSDP
    return True


def sharding_facts(model: Any) -> dict[str, Any]:
    """How a model is distributed: FSDP2 (`fully_shard`), DDP or a plain module.

    Returns:
        `wrapper` ("fully_shard", "DistributedDataParallel" or "none"), `fsdp_modules` (modules
        that are `FSDPModule`s, the root included), `parameters` and `dtensor_parameters`
        (FSDP2 turns every parameter into a sharded DTensor), and `local_fraction`: the share of
        the parameter elements held by this rank (1/world size when fully sharded).
    """
    from torch.distributed.fsdp import FSDPModule
    from torch.distributed.tensor import DTensor
    from torch.nn.parallel import DistributedDataParallel

    if isinstance(model, FSDPModule):
        wrapper = "fully_shard"
    elif isinstance(model, DistributedDataParallel):
        wrapper = "DistributedDataParallel"
    else:
        wrapper = "none"
    params = list(model.parameters())
    dtensors = [p for p in params if isinstance(p, DTensor)]
    local = sum(p.to_local().numel() if isinstance(p, DTensor) else p.numel() for p in params)
    total = sum(p.numel() for p in params)
    return {
        "wrapper": wrapper,
        "fsdp_modules": sum(isinstance(m, FSDPModule) for m in model.modules()),
        "parameters": len(params),
        "dtensor_parameters": len(dtensors),
        "local_fraction": round(local / total, 6) if total else None,
    }


class FullyShardedCheck(TrainerCallback):
    """Refuse to train a launch whose config asked for FSDP when the model is not sharded.

    At the start of training (after accelerate prepared the model) it reads `sharding_facts`
    of the model the loop will train; `facts` keeps them for the evidence.
    """

    def __init__(self) -> None:
        self.facts: dict[str, Any] | None = None

    def on_train_begin(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        model = kwargs.get("model")
        if model is None:
            return
        self.facts = sharding_facts(model)
        if fsdp_requested() and (
            self.facts["wrapper"] != "fully_shard"
            or self.facts["dtensor_parameters"] != self.facts["parameters"]
        ):
            raise DistributedSetupError(
                f"the accelerate config asks for FSDP but the model is {self.facts}: training "
                "would run unsharded. On CPU processes rsi-hub re-enables FSDP itself "
                "(rsi_hub.train.fsdp); check the launch config's distributed_type and that "
                "this accelerate version still demotes FSDP the same way."
            )
