"""`training_evidence.json` of a run (card section 7) and its Slurm record.

Written when training starts (status `running`), updated at every launch of the same run (each
launch is one entry of `attempts`; a resumed launch names its checkpoint) and completed at the
end (status `completed`, optimizer steps, end time, first and last loss). Under Slurm the job id
is recorded from `SLURM_JOB_ID`; a job's final state exists only once it has ended, so
`rsi-hub train finalize RUN` (run by the sbatch template as a dependent job) asks `sacct` and
records it.
"""

from __future__ import annotations

import datetime as dt
import os
from pathlib import Path
from typing import Any

from rsi_hub import slurm
from rsi_hub.errors import RsiHubError, SlurmError
from rsi_hub.rundir import EVIDENCE_FILE, TrainingEvidence


def now() -> str:
    """The current UTC time in ISO 8601, seconds precision."""
    return dt.datetime.now(dt.UTC).isoformat(timespec="seconds")


def slurm_job_id() -> str | None:
    """The Slurm job id of this process (`SLURM_JOB_ID`), or `None` outside Slurm."""
    return os.environ.get("SLURM_JOB_ID") or None


def slurm_job_state(job_id: str) -> str | None:
    """The job's state from `sacct` (COMPLETED, FAILED, ...), or `None` if sacct cannot tell."""
    try:
        return slurm.job_state(job_id)
    except SlurmError:
        return None


def finalize_slurm_state(run_dir: str | Path) -> TrainingEvidence:
    """Record the final Slurm state of the run's job(s) in its evidence, from `sacct`.

    Run it after the job has ended (the sbatch template submits it as an `afterany` job).

    Raises:
        RsiHubError: the run has no evidence, no Slurm job id, or sacct has no record of the
            job yet; SlurmError: sacct is not available or fails.
    """
    evidence = TrainingEvidence.read_if_any(run_dir)
    if evidence is None:
        raise RsiHubError(f"{run_dir} has no {EVIDENCE_FILE}: nothing to finalize")
    job_id = evidence.slurm_job_id
    if not job_id:
        raise RsiHubError(f"{run_dir}: the run was not launched under Slurm (no job id recorded)")
    record = slurm.sacct([job_id]).get(job_id)
    if record is None:
        raise RsiHubError(
            f"{run_dir}: sacct has no record of job {job_id} yet; run this after the job ended "
            "(the sbatch template queues it `afterany` on the training job)"
        )
    evidence.slurm = {
        **(evidence.slurm or {}),
        "state": record.state,
        "exit_code": record.exit_code,
        "state_recorded_at": now(),
    }
    evidence.write(run_dir)
    return evidence


def base_model_lineage(
    model_path: str | Path, base_model: str | None, revision: str | None
) -> dict[str, Any]:
    """The original pretrained model of a run: from the recipe, else from the init's evidence."""
    if base_model is not None:
        return {"id": base_model, "revision": revision}
    init_evidence = TrainingEvidence.read_if_any(model_path) if Path(model_path).is_dir() else None
    if init_evidence is not None and isinstance(init_evidence.base_model, dict):
        return dict(init_evidence.base_model)
    return {"id": None, "revision": None, "note": "random-init tiny checkpoint or unknown lineage"}
