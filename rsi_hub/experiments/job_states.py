"""The Slurm state of each arm of a submitted sweep, as one cell of `rsi-hub runs`.

An arm's jobs are in its `sweep.json` entry (`jobs.train`, `jobs.eval`). Ended jobs are read
from sacct, queued ones from squeue. An evaluation queued `afterok` on a training job that
failed can never start: Slurm marks it DependencyNeverSatisfied and, as the sweep submits it
with `--kill-on-invalid-dep=yes`, cancels it. The cell says so, with the training job's state,
so that a missing score is never mistaken for a bad one.
"""

from __future__ import annotations

from collections.abc import Sequence

from rsi_hub import slurm
from rsi_hub.errors import SlurmError
from rsi_hub.rundir import SweepArm


def _jobs(arm: SweepArm) -> dict[str, str]:
    jobs = arm.extra.get("jobs") or {}
    return {step: str(job) for step, job in jobs.items() if job}


def arm_job_states(arms: Sequence[SweepArm]) -> dict[str, str]:
    """Arm name -> e.g. `train COMPLETED (job 4); eval COMPLETED (job 5)`, for arms with jobs.

    Without Slurm commands here the cell names the job ids and says the states are unknown.
    """
    with_jobs = {arm.name: _jobs(arm) for arm in arms if _jobs(arm)}
    ids = [job for jobs in with_jobs.values() for job in jobs.values()]
    if not ids:
        return {}
    try:
        ended = slurm.sacct(ids)
        waiting = slurm.queued(ids)
    except SlurmError as err:
        return {
            name: "; ".join(f"{step} job {job}" for step, job in jobs.items())
            + f" (states unknown: {err})"
            for name, jobs in with_jobs.items()
        }

    def state(job: str) -> str:
        if job in waiting:
            return waiting[job][0]
        return ended[job].state if job in ended else "UNKNOWN"

    cells = {}
    for name, jobs in with_jobs.items():
        parts = []
        train = jobs.get("train")
        if train:
            parts.append(f"train {state(train)} (job {train})")
        evaluation = jobs.get("eval")
        if evaluation:
            parts.append(_eval_cell(evaluation, state(evaluation), train and state(train), waiting))
        cells[name] = "; ".join(parts)
    return cells


def _eval_cell(
    job: str, state: str, train_state: str | None, waiting: dict[str, tuple[str, str]]
) -> str:
    reason = waiting.get(job, ("", ""))[1]
    if reason == slurm.NEVER_SATISFIED:
        return f"eval never run: {slurm.NEVER_SATISFIED}, training {train_state} (job {job})"
    failed_training = train_state in slurm.TERMINAL_STATES and train_state != "COMPLETED"
    if state == "CANCELLED" and failed_training:
        return (
            f"eval never run: training {train_state}, afterok never satisfied "
            f"({slurm.NEVER_SATISFIED}; cancelled, job {job})"
        )
    if state == "PENDING" and reason:
        return f"eval PENDING ({reason}, job {job})"
    return f"eval {state} (job {job})"
