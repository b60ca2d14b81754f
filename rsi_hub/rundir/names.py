"""The names of the files rsi-hub writes into run, eval, synthesis, sweep and release folders.

This is the one place that spells them: every other module builds these paths through the
helpers here, and `tests/test_rundir.py` fails if another module names one of these files.
"""

from __future__ import annotations

from pathlib import Path

from rsi_hub import hashing

EVIDENCE_FILE = "training_evidence.json"
EVAL_DIR = "eval"
RESULTS_FILE = "results.json"
META_FILE = "meta.json"
SAMPLES_PREFIX = "samples_"
SYNTH_RUN_FILE = "run.json"
PROVENANCE_FILE = "provenance.json"
SWEEP_FILE = "sweep.json"
RELEASE_MANIFEST_FILE = "release_manifest.json"
REPLICATE_LEDGER_FILE = "replicate.json"
REPLICATION_REPORT_FILE = "replication.json"
DOSE_RESPONSE_FILE = "replication_dose_response.png"

# Every file name above: no module outside rsi_hub.rundir may spell one of these.
RECORD_FILES = (
    EVIDENCE_FILE,
    RESULTS_FILE,
    META_FILE,
    SYNTH_RUN_FILE,
    PROVENANCE_FILE,
    SWEEP_FILE,
    RELEASE_MANIFEST_FILE,
    REPLICATE_LEDGER_FILE,
    REPLICATION_REPORT_FILE,
)


def evidence_path(run: str | Path) -> Path:
    """`RUN/training_evidence.json`: what trained the weights (card section 7)."""
    return Path(run) / EVIDENCE_FILE


def eval_root(run: str | Path) -> Path:
    """`RUN/eval/`: one folder per evaluated suite (or suite and candidate prompt)."""
    return Path(run) / EVAL_DIR


def eval_dir(run: str | Path, suite: str) -> Path:
    """`RUN/eval/<suite>/`: lm-eval's results, the per-sample logs and `meta.json`."""
    return eval_root(run) / suite


SUPERSEDED_DIR = ".superseded"


def superseded_eval_dir(run: str | Path, folder: str, checker_version: str | None) -> Path:
    """`RUN/eval/.superseded/<folder>.checker-<version>/`: an eval folder `rsi-hub rescore`
    replaced, kept as it was. Hidden, so nothing reads it as a result."""
    return eval_root(run) / SUPERSEDED_DIR / f"{folder}.checker-{checker_version or 'unknown'}"


def results_path(folder: str | Path) -> Path:
    """`<eval folder>/results.json`: lm-eval's results."""
    return Path(folder) / RESULTS_FILE


def meta_path(folder: str | Path) -> Path:
    """`<eval folder>/meta.json`: what was scored and how (an `EvalMeta`)."""
    return Path(folder) / META_FILE


def samples_path(folder: str | Path, task: str) -> Path:
    """`<eval folder>/samples_<task>.jsonl`: lm-eval's per-document log of one task."""
    return Path(folder) / f"{SAMPLES_PREFIX}{task}.jsonl"


def sample_files(folder: str | Path) -> list[Path]:
    """Every `samples_<task>.jsonl` of an eval folder, in name order."""
    return sorted(Path(folder).glob(f"{SAMPLES_PREFIX}*.jsonl"))


def sample_task(path: str | Path) -> str:
    """The task name of a `samples_<task>.jsonl` file."""
    return Path(path).stem[len(SAMPLES_PREFIX) :]


def synth_run_path(out_dir: str | Path) -> Path:
    """`OUT/run.json` of a synthesis run: the settings a resume must match."""
    return Path(out_dir) / SYNTH_RUN_FILE


def provenance_path(out_dir: str | Path) -> Path:
    """`OUT/provenance.json` of a finished synthesis run (a `SynthProvenance`)."""
    return Path(out_dir) / PROVENANCE_FILE


def sweep_path(sweep: str | Path) -> Path:
    """The `sweep.json` of a sweep folder; a path to the file itself is returned as is."""
    path = Path(sweep)
    return path / SWEEP_FILE if path.is_dir() or path.suffix != ".json" else path


def release_manifest_path(folder: str | Path) -> Path:
    """`<staged release>/release_manifest.json` (a `ReleaseManifest`)."""
    return Path(folder) / RELEASE_MANIFEST_FILE


def replicate_ledger_path(out_dir: str | Path) -> Path:
    """`OUT/replicate.json` of `rsi-hub replicate`: each finished stage and its output hashes."""
    return Path(out_dir) / REPLICATE_LEDGER_FILE


def replication_report_path(run: str | Path) -> Path:
    """`RUN/replication.json`: the replication's rounds, verdicts and power, for the card."""
    return Path(run) / REPLICATION_REPORT_FILE


def dose_response_path(run: str | Path) -> Path:
    """`RUN/replication_dose_response.png`: IF-818 pass rate over the replication's rounds."""
    return Path(run) / DOSE_RESPONSE_FILE


def weights_sha256(run: str | Path) -> str:
    """The sha256 that names a run's weights: `rsi_hub.hashing.weights_sha256` of the folder.

    Evidence, eval meta, synthesis provenance and the release manifest all record this value;
    hashing stays the one place that reads the bytes.
    """
    return hashing.weights_sha256(run)
