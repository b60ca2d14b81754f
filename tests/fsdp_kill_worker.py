"""Trains a recipe under `accelerate launch` and SIGKILLs the whole launch after checkpoint N.

    accelerate launch --config_file launch/accelerate_fsdp2_cpu.yaml -m tests.fsdp_kill_worker \
        N TRAINER RECIPE [KEY=VALUE ...]

The same `rsi_hub.train.train` call as `rsi-hub train TRAINER --recipe RECIPE KEY=VALUE ...`,
plus one callback: once every rank has written its part of checkpoint-N (a barrier after
`on_save`), rank 0 SIGKILLs the launcher and each rank SIGKILLs itself, so the job dies as a
node loss or `scancel -s KILL` would end it, with nothing flushed or cleaned up, between two
exact optimizer steps. `tests/test_fsdp_cpu.py` then relaunches the ordinary command.
"""

from __future__ import annotations

import os
import signal
import sys

from transformers import TrainerCallback


class KillAfterCheckpoint(TrainerCallback):
    """SIGKILL the launch right after checkpoint-`step` is complete on every rank."""

    def __init__(self, step: int) -> None:
        self.step = step

    def on_save(self, args, state, control, **kwargs):
        if state.global_step != self.step:
            return
        import torch.distributed as dist

        dist.barrier()  # every rank has saved its shard, optimizer state and RNG state
        if dist.get_rank() == 0:
            os.kill(os.getppid(), signal.SIGKILL)  # `accelerate launch` (torchrun's agent)
        os.kill(os.getpid(), signal.SIGKILL)


def main(argv: list[str]) -> None:
    from rsi_hub.train import load_recipe, train

    step, trainer, recipe_name, *overrides = argv
    recipe = load_recipe(recipe_name, overrides, trainer=trainer)
    train(recipe, callbacks=[KillAfterCheckpoint(int(step))])
    raise SystemExit(f"the run finished without reaching checkpoint-{step}")


if __name__ == "__main__":
    main(sys.argv[1:])
