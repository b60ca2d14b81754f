"""The Slurm commands rsi-hub uses: submit (`sbatch`), ask (`sacct`, `squeue`), cancel.

One place for them, so that training, sweeps and sharded synthesis parse Slurm's answers one
way. Accounting: on a cluster with slurmdbd `sacct` answers directly; on one that keeps only the
job-completion text file (jobcomp/filetxt, as `scripts/slurm_local.sh` starts) plain `sacct`
says "accounting storage is disabled" and the same question goes to `sacct --completion`.
"""

from __future__ import annotations

import shlex
import shutil
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass

from rsi_hub.errors import SlurmError

# States after which a job never changes again (sacct's names; "CANCELLED by 0" is cut).
TERMINAL_STATES = frozenset(
    {
        "BOOT_FAIL", "CANCELLED", "COMPLETED", "DEADLINE", "FAILED", "NODE_FAIL",
        "OUT_OF_MEMORY", "PREEMPTED", "TIMEOUT",
    }
)  # fmt: skip
# squeue's reason for a job whose dependency can no longer be met (e.g. afterok on a failure).
NEVER_SATISFIED = "DependencyNeverSatisfied"
_TIMEOUT_S = 30
_ACCOUNTING_DISABLED = "accounting storage is disabled"


@dataclass(frozen=True)
class JobRecord:
    """One job as sacct reports it once it has ended."""

    job_id: str
    state: str
    exit_code: str | None = None

    @property
    def succeeded(self) -> bool:
        """True for COMPLETED (exit code 0): what `afterok` waits for."""
        return self.state == "COMPLETED"


def _run(command: list[str]) -> subprocess.CompletedProcess[str]:
    if shutil.which(command[0]) is None:
        raise SlurmError(
            f"`{command[0]}` is not on the PATH: run this on a Slurm cluster (for a local one: "
            "`bash scripts/slurm_local.sh up` and export the SLURM_CONF it prints)."
        )
    try:
        return subprocess.run(
            command, capture_output=True, text=True, timeout=_TIMEOUT_S, check=False
        )
    except subprocess.TimeoutExpired as err:
        raise SlurmError(f"`{shlex.join(command)}` did not answer in {_TIMEOUT_S} s.") from err


def parse_job_id(stdout: str) -> str:
    """The job id `sbatch --parsable` printed ("JOBID" or "JOBID;CLUSTER").

    Raises:
        SlurmError: the text is not a job id.
    """
    job = stdout.strip().split(";")[0]
    if not job.isdigit():
        raise SlurmError(f"sbatch answered {stdout.strip()!r}, not a job id.")
    return job


def sbatch(args: Sequence[str], *, executable: str = "sbatch") -> str:
    """Submit with `sbatch --parsable ARGS`; return the job id.

    Raises:
        SlurmError: sbatch is missing, refused the job (its message), or printed no job id.
    """
    command = [executable, "--parsable", *args]
    done = _run(command)
    if done.returncode:
        raise SlurmError(f"`{shlex.join(command)}` failed: {done.stderr.strip()}")
    return parse_job_id(done.stdout)


def sacct(job_ids: Sequence[str]) -> dict[str, JobRecord]:
    """The ended jobs among `job_ids` (job id -> record); a job still queued or running is absent
    when only the completion file is kept, or present with its current state under slurmdbd.

    Raises:
        SlurmError: sacct is missing or fails for another reason than disabled accounting.
    """
    if not job_ids:
        return {}
    query = ["-X", "--noheader", "--parsable2", "--format=JobID,State,ExitCode"]
    query += ["--jobs", ",".join(job_ids)]
    done = _run(["sacct", *query])
    if done.returncode and _ACCOUNTING_DISABLED in done.stderr + done.stdout:
        done = _run(["sacct", "--completion", *query])
    if done.returncode:
        raise SlurmError(f"sacct failed: {done.stderr.strip() or done.stdout.strip()}")
    records: dict[str, JobRecord] = {}
    for line in done.stdout.splitlines():
        parts = line.strip().split("|")
        if len(parts) < 2 or parts[0] not in job_ids:
            continue
        # A requeued job has one line per run: the last is the latest.
        state = parts[1].split()[0] if parts[1].strip() else "UNKNOWN"
        records[parts[0]] = JobRecord(parts[0], state, parts[2] if len(parts) > 2 else None)
    return records


def job_state(job_id: str) -> str | None:
    """The job's state from sacct (COMPLETED, FAILED, ...), or None if sacct does not know it."""
    record = sacct([job_id]).get(job_id)
    return record.state if record else None


def queued(job_ids: Sequence[str]) -> dict[str, tuple[str, str]]:
    """Jobs still in the queue: job id -> (state, reason), e.g. ("PENDING", "Dependency")."""
    if not job_ids:
        return {}
    done = _run(["squeue", "--noheader", "--jobs", ",".join(job_ids), "--format=%i|%T|%r"])
    found: dict[str, tuple[str, str]] = {}
    # squeue exits 1 with "Invalid job id" once every listed job has left the queue.
    for line in done.stdout.splitlines():
        parts = line.strip().split("|")
        if len(parts) == 3 and parts[0] in job_ids:
            found[parts[0]] = (parts[1], parts[2])
    return found


def scancel(job_ids: Sequence[str]) -> None:
    """Cancel jobs (those already ended are ignored by Slurm)."""
    if job_ids:
        _run(["scancel", *job_ids])
