"""`synthesize`: the one call behind `rsi-hub synth lensyn` and `rsi-hub synth rft`."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from rsi_hub.errors import RsiHubError
from rsi_hub.hashing import weights_sha256
from rsi_hub.rundir import SynthProvenance
from rsi_hub.synth.backends import GenerationBackend, SamplingSettings, make_backend
from rsi_hub.synth.filter import Judge
from rsi_hub.synth.pool import Eligible, audit_data, select_prompts
from rsi_hub.synth.provenance import Audit
from rsi_hub.synth.run import SynthSpec, run_synthesis

DEFAULT_BATCH_SIZE = {"hf": 16, "vllm": 1024}


class ContaminationError(RsiHubError):
    """The finished data shares prompts with a holdout suite; it must not be trained on."""


def synthesize(
    mode: str,
    model: str | Path,
    out_dir: str | Path,
    *,
    k: int = 4,
    limit: int | None = None,
    check_types: list[str] | None = None,
    backend: str | GenerationBackend = "hf",
    sampling: SamplingSettings | None = None,
    batch_size: int | None = None,
    tensor_parallel_size: int = 1,
    prompts_file: str | Path | None = None,
    force: bool = False,
    eligible: Eligible | None = None,
    audit: Audit | None = None,
    judge: Judge | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> SynthProvenance:
    """Grow a verifier-filtered data set from a checkpoint (resuming a run left in `out_dir`).

    Args:
        mode: `lensyn` (scaffolded, FINAL: answer kept) or `rft` (served, whole reply kept).
        model: the checkpoint folder (a run directory).
        out_dir: where `data.jsonl`, `ledger.jsonl`, `run.json`, `provenance.json` go.
        k: samples per prompt.
        limit: use only the first `limit` eligible prompts.
        check_types: use only prompts carrying a check of one of these types.
        backend: `hf`, `vllm`, or a backend object (tests pass a stand-in).
        sampling: temperature, top_p, max_new_tokens, seed.
        batch_size: requests per generation call (and per ledger flush); default 16 for hf,
            1024 for vllm, whose scheduler wants many requests at once.
        tensor_parallel_size: GPUs per vLLM engine.
        prompts_file: a JSONL prompt file instead of the suites' generation pool.
        force: start over when `out_dir` holds a run with other settings.
        eligible, audit, judge: the suites' eligibility rule (`pool_eligible` for the pool,
            no holdout match for a file), the audit and the checker by default; injectable.
        progress: called with (done, total) after each batch.

    Returns:
        The provenance record (also in `out_dir/provenance.json`).

    Raises:
        ContaminationError: the audit found holdout prompts in the data (provenance is still
            written, so the report can be read).
    """
    sampling = sampling or SamplingSettings()
    prompts = select_prompts(prompts_file, limit, eligible, check_types=check_types)
    if not prompts:
        raise RsiHubError(
            "no eligible prompts: the pool (or --prompts file) is empty after filtering."
        )
    model_path = Path(model)
    if not model_path.is_dir():
        raise RsiHubError(f"{model_path}: not a model folder (expected a run directory).")
    generator = (
        make_backend(backend, model_path, sampling, tensor_parallel_size=tensor_parallel_size)
        if isinstance(backend, str)
        else backend
    )
    spec = SynthSpec(
        mode=mode,
        model=str(model_path),
        weights_sha256=weights_sha256(model_path),
        backend=generator.name,
        sampling=sampling,
        k=k,
        prompt_source=str(prompts_file) if prompts_file else "pool",
        check_types=tuple(check_types or ()),
    )
    provenance = run_synthesis(
        prompts,
        generator,
        out_dir,
        spec,
        audit=audit or audit_data,
        batch_size=batch_size or DEFAULT_BATCH_SIZE.get(generator.name, 16),
        judge=judge,
        force=force,
        progress=progress,
    )
    if not provenance.audit_passed:
        raise ContaminationError(
            f"{out_dir}: the contamination audit found holdout prompts in the data; see "
            "provenance.json `audit`. Do not train on it."
        )
    return provenance
