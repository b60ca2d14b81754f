"""The run-directory contract: file names, typed records, library versions, the weights hash.

A leaf package (it imports only `rsi_hub.errors` and `rsi_hub.hashing`): every stage reads and
writes run, eval, synthesis, sweep and release folders through it, and no other module spells
one of their file names.

```
RUN/training_evidence.json          TrainingEvidence      (train, tiny, soup)
RUN/eval/<suite>/meta.json          EvalMeta              (eval)
RUN/eval/<suite>/results.json       lm-eval's results     (eval)
RUN/eval/<suite>/samples_<t>.jsonl  lm-eval's sample logs (eval)
OUT/run.json, OUT/provenance.json   synthesis settings, SynthProvenance (synth)
SWEEP_DIR/sweep.json                SweepManifest         (sweep)
STAGED/release_manifest.json        ReleaseManifest       (release)
```

Records are dataclasses with `to_json` / `from_json`, `read` / `write` and a `schema_version`;
unknown keys are preserved in `extra` (see `rsi_hub.rundir.records`). Writes are atomic and
fsynced (`write_json_atomic`).
"""

from rsi_hub.rundir.jsonfile import dumps, fsync_dir, read_json_object, write_json_atomic
from rsi_hub.rundir.names import (
    DOSE_RESPONSE_FILE,
    EVAL_DIR,
    EVIDENCE_FILE,
    META_FILE,
    PROVENANCE_FILE,
    RECORD_FILES,
    RELEASE_MANIFEST_FILE,
    REPLICATION_REPORT_FILE,
    RESULTS_FILE,
    SAMPLES_PREFIX,
    SWEEP_FILE,
    SYNTH_RUN_FILE,
    dose_response_path,
    eval_dir,
    eval_root,
    evidence_path,
    meta_path,
    provenance_path,
    release_manifest_path,
    replicate_ledger_path,
    replication_report_path,
    results_path,
    sample_files,
    sample_task,
    samples_path,
    superseded_eval_dir,
    sweep_path,
    synth_run_path,
    weights_sha256,
)
from rsi_hub.rundir.records import (
    SCHEMA_VERSION,
    EvalMeta,
    FileEntry,
    ReleaseManifest,
    ReplicateLedger,
    ReplicationReport,
    SweepArm,
    SweepManifest,
    SynthProvenance,
    TrainingEvidence,
)
from rsi_hub.rundir.versions import LIBRARIES, library_versions

__all__ = [
    "DOSE_RESPONSE_FILE",
    "EVAL_DIR",
    "EVIDENCE_FILE",
    "LIBRARIES",
    "META_FILE",
    "PROVENANCE_FILE",
    "RECORD_FILES",
    "RELEASE_MANIFEST_FILE",
    "REPLICATION_REPORT_FILE",
    "RESULTS_FILE",
    "SAMPLES_PREFIX",
    "SCHEMA_VERSION",
    "SWEEP_FILE",
    "SYNTH_RUN_FILE",
    "EvalMeta",
    "FileEntry",
    "ReleaseManifest",
    "ReplicateLedger",
    "ReplicationReport",
    "SweepArm",
    "SweepManifest",
    "SynthProvenance",
    "TrainingEvidence",
    "dose_response_path",
    "dumps",
    "eval_dir",
    "eval_root",
    "evidence_path",
    "fsync_dir",
    "library_versions",
    "meta_path",
    "provenance_path",
    "read_json_object",
    "release_manifest_path",
    "replicate_ledger_path",
    "replication_report_path",
    "results_path",
    "sample_files",
    "sample_task",
    "samples_path",
    "superseded_eval_dir",
    "sweep_path",
    "synth_run_path",
    "weights_sha256",
    "write_json_atomic",
]
