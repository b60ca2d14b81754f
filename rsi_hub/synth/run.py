"""One synthesis run: generate K samples per prompt, filter them, stream, resume, record provenance."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rsi_hub.batching import batched
from rsi_hub.chat import load_system_prompt
from rsi_hub.errors import SynthError, SynthInputError
from rsi_hub.rundir import SynthProvenance
from rsi_hub.suites.prompts import PoolPrompt, prompt_ids_sha256, validate_prompts
from rsi_hub.synth.backends import GenerationBackend, GenerationRequest, SamplingSettings
from rsi_hub.synth.filter import (
    MODES,
    Judge,
    checker_version,
    default_judge,
    generation_messages,
    judge_answer,
    judge_generation,
)
from rsi_hub.synth.prompts import load_scaffold
from rsi_hub.synth.provenance import Audit, build_provenance, text_sha256
from rsi_hub.synth.stats import ledger_stats
from rsi_hub.synth.store import RunStore, read_jsonl, sample_key


@dataclass(frozen=True)
class SynthSpec:
    """What a run is: recorded in `run.json`, and a resume must match it."""

    mode: str
    model: str
    weights_sha256: str
    backend: str
    sampling: SamplingSettings
    k: int
    prompt_source: str = "pool"
    check_types: tuple[str, ...] = ()  # only prompts carrying one of these check types
    shard: dict[str, Any] | None = None  # `Shard.record`: this run is one slice of a selection

    def run_config(self, prompt_ids: list[Any]) -> dict[str, Any]:
        """The JSON-ready `run.json` content for these prompts."""
        if self.mode not in MODES:
            raise SynthInputError(
                f"unknown synthesis mode {self.mode!r}; choose one of {MODES}.", field="mode"
            )
        if self.k < 1:
            raise SynthInputError(f"--k must be at least 1, got {self.k}.", field="k")
        config = {
            "mode": self.mode,
            "model": self.model,
            "weights_sha256": self.weights_sha256,
            "backend": self.backend,
            "sampling": self.sampling.to_dict(),
            "k": self.k,
            "scaffold_sha256": text_sha256(load_scaffold()) if self.mode == "lensyn" else None,
            "system_prompt_sha256": text_sha256(load_system_prompt()),
            "checker_version": checker_version(),
            "prompt_source": self.prompt_source,
            "check_types": list(self.check_types),
            "n_prompts": len(prompt_ids),
            "prompt_ids_sha256": prompt_ids_sha256(prompt_ids),
        }
        if self.shard is not None:
            config["shard"] = dict(self.shard)  # absent from unsharded runs, as before
        return config


def pending_requests(
    prompts: Sequence[PoolPrompt], k: int, mode: str, done: set[tuple[str, int]]
) -> Iterator[GenerationRequest]:
    """Every (prompt, sample) not yet in the ledger, prompt by prompt."""
    for prompt in prompts:
        messages = None
        for sample in range(k):
            if sample_key(prompt.id, sample) in done:
                continue
            messages = messages or generation_messages(prompt, mode)
            yield GenerationRequest(prompt.id, sample, messages)


def run_synthesis(
    prompts: Sequence[PoolPrompt],
    backend: GenerationBackend,
    out_dir: str | Path,
    spec: SynthSpec,
    *,
    audit: Audit,
    batch_size: int = 64,
    judge: Judge | None = None,
    force: bool = False,
    progress: Callable[[int, int], None] | None = None,
) -> SynthProvenance:
    """Grow a verifier-filtered data set in `out_dir`, resuming a run left there.

    Args:
        prompts: the generation-pool prompts, already restricted to eligible ids.
        backend: draws the samples (the stand-in of a test, or `hf` / `vllm`).
        out_dir: the run folder (see `rsi_hub.synth.store`).
        spec: mode, model, sampling and K; must match a run being resumed.
        audit: the contamination audit run on the finished data.
        batch_size: requests per backend call; the ledger is flushed after each.
        judge: the checker (default `rsi_hub.checker.check`).
        force: start over when `out_dir` holds a run with other settings.
        progress: called with (samples done, samples total) after every batch.

    Returns:
        The provenance record, also written to `out_dir/provenance.json`.
    """
    judge = judge or default_judge()
    by_id = {str(p.id): p for p in prompts}
    if len(by_id) != len(prompts):
        raise SynthInputError("the prompt list holds duplicate ids.")
    validate_prompts(prompts)
    prompt_ids = [p.id for p in prompts]
    run_config = spec.run_config(prompt_ids)
    store = RunStore(out_dir)

    def rejudge(row: dict[str, Any]) -> dict[str, Any]:
        # A kept row whose ledger line was lost: the checker is deterministic, so judging
        # its stored answer again gives back exactly the lost entry.
        prompt = by_id[str(row["prompt_id"])]
        answer = row["messages"][-1]["content"]
        return judge_answer(prompt, int(row["sample"]), answer, judge)[0]

    total = len(prompts) * spec.k
    done = store.open(run_config, rejudge=rejudge, force=force)
    try:
        for batch in batched(pending_requests(prompts, spec.k, spec.mode, store.done), batch_size):
            generations = backend.generate(batch)
            if len(generations) != len(batch):
                raise SynthError(
                    f"backend {backend.name} returned {len(generations)} generations for "
                    f"{len(batch)} requests."
                )
            for request, generation in zip(batch, generations, strict=True):
                entry, row = judge_generation(
                    by_id[str(request.prompt_id)],
                    request.sample,
                    generation,
                    mode=spec.mode,
                    judge=judge,
                )
                store.append(entry, row)
            store.flush()
            done += len(batch)
            if progress is not None:
                progress(done, total)
    finally:
        store.close()
    return finalize(store, run_config, prompt_ids, audit)


def finalize(
    store: RunStore, run_config: dict[str, Any], prompt_ids: list[Any], audit: Audit
) -> SynthProvenance:
    """Compute the statistics, run the audit, and write `provenance.json`."""
    stats = ledger_stats(read_jsonl(store.ledger_path))
    store.data_path.touch()  # a run that kept nothing still has a (empty) data file
    report = dict(audit(store.data_path))
    provenance = build_provenance(
        run_config=run_config,
        stats=stats,
        data_path=store.data_path,
        prompt_ids=prompt_ids,
        audit=report,
    )
    provenance.write_file(store.provenance_path)
    return provenance
