"""`synthesize`: the one call behind `rsi-hub synth lensyn` and `rsi-hub synth rft`."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from rsi_hub.errors import SynthError, SynthFileError, SynthInputError
from rsi_hub.hashing import weights_sha256
from rsi_hub.rundir import SynthProvenance
from rsi_hub.suites.prompts import Eligible, select_prompts
from rsi_hub.synth.backends import (
    GenerationBackend,
    make_backend,
    reference_teacher_name,
    teacher_sha256,
)
from rsi_hub.synth.config import SynthConfig
from rsi_hub.synth.filter import Judge
from rsi_hub.synth.pool import audit_data
from rsi_hub.synth.provenance import Audit
from rsi_hub.synth.run import SynthSpec, run_synthesis
from rsi_hub.synth.shards import Shard, merge_shards

DEFAULT_BATCH_SIZE = {"hf": 16, "vllm": 1024, "reference": 1024}


class ContaminationError(SynthError):
    """The finished data shares prompts with a holdout suite; it must not be trained on."""


def synthesize(
    config: SynthConfig,
    *,
    generator: GenerationBackend | None = None,
    eligible: Eligible | None = None,
    audit: Audit | None = None,
    judge: Judge | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> SynthProvenance:
    """Grow a verifier-filtered data set from a checkpoint (resuming a run left in `config.out`).

    Args:
        config: mode (`lensyn`: scaffolded, FINAL: answer kept; `rft`: served, whole reply
            kept), the checkpoint, the output folder (`data.jsonl`, `ledger.jsonl`, `run.json`,
            `provenance.json`), K, the prompt selection, sampling and backend; see `SynthConfig`.
            `batch_size` defaults to 16 for hf and 1024 for vllm, whose scheduler wants many
            requests at once.
        generator: a backend object used instead of building `config.backend` (tests pass a
            stand-in).
        eligible, audit, judge: the suites' eligibility rule (`pool_eligible` for the pool,
            no holdout match for a file), the audit and the checker by default; injectable.
        progress: called with (done, total) after each batch.

    Returns:
        The provenance record (also in `out/provenance.json`).

    Raises:
        ContaminationError: the audit found holdout prompts in the data (provenance is still
            written, so the report can be read).
    """
    sampling = config.sampling
    prompts = select_prompts(
        config.prompts_file, config.limit, eligible, check_types=list(config.check_types)
    )
    if not prompts:
        raise SynthInputError(
            "no eligible prompts: the pool (or --prompts file) is empty after filtering.",
            field="prompts_file",
        )
    shard_record = None
    if config.shard is not None:
        shard = Shard.parse(config.shard)
        shard_record = shard.record([p.id for p in prompts])
        prompts = shard.select(prompts)
        if not prompts:
            raise SynthInputError(
                f"--shard {config.shard}: the selection has only {shard_record['pool_prompts']} "
                "prompts, so this shard is empty; use fewer shards.",
                field="shard",
            )
    if config.backend == "reference":
        # The teacher is code: provenance names it and binds the data to its source's sha256.
        model_name = reference_teacher_name(config.teacher_filler)
        model_sha = teacher_sha256()
        generator = generator or make_backend(
            "reference",
            config.model,
            sampling,
            prompts=prompts,
            teacher_filler=config.teacher_filler,
        )
        return _run(
            config, prompts, generator, model_name, model_sha, audit, judge, progress, shard_record
        )
    model_path = Path(config.model)
    if not model_path.is_dir():
        raise SynthFileError(
            f"{model_path}: not a model folder (expected a run directory).",
            path=model_path,
            field="model",
        )
    if generator is None:
        generator = make_backend(
            config.backend,
            model_path,
            sampling,
            tensor_parallel_size=config.tensor_parallel_size,
        )
    return _run(
        config,
        prompts,
        generator,
        str(model_path),
        weights_sha256(model_path),
        audit,
        judge,
        progress,
        shard_record,
    )


def _run(
    config: SynthConfig,
    prompts: list[Any],
    generator: GenerationBackend,
    model: str,
    model_sha256: str,
    audit: Audit | None,
    judge: Judge | None,
    progress: Callable[[int, int], None] | None,
    shard: dict[str, Any] | None = None,
) -> SynthProvenance:
    """Run the synthesis with a built backend; refuse data the holdout audit flags."""
    out_dir, prompts_file, check_types = config.out, config.prompts_file, config.check_types
    spec = SynthSpec(
        mode=config.mode,
        model=model,
        weights_sha256=model_sha256,
        backend=generator.name,
        sampling=config.sampling,
        k=config.k,
        prompt_source=str(prompts_file) if prompts_file else "pool",
        check_types=check_types,
        shard=shard,
    )
    provenance = run_synthesis(
        prompts,
        generator,
        out_dir,
        spec,
        audit=audit or audit_data,
        batch_size=config.batch_size or DEFAULT_BATCH_SIZE.get(generator.name, 16),
        judge=judge,
        force=config.force,
        progress=progress,
    )
    if not provenance.audit_passed:
        raise ContaminationError(
            f"{out_dir}: the contamination audit found holdout prompts in the data; see "
            "provenance.json `audit`. Do not train on it."
        )
    return provenance


def merge(
    shard_dirs: list[str | Path], out: str | Path, *, audit: Audit | None = None
) -> SynthProvenance:
    """`rsi-hub synth merge`: join finished shards into one run (see `rsi_hub.synth.shards`).

    Raises:
        ContaminationError: the audit found holdout prompts in the merged data.
    """
    provenance = merge_shards(shard_dirs, out, audit or audit_data)
    if not provenance.audit_passed:
        raise ContaminationError(
            f"{out}: the contamination audit found holdout prompts in the merged data; see "
            "provenance.json `audit`. Do not train on it."
        )
    return provenance
