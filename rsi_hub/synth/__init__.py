"""Verifier-filtered synthetic data (card section 2).

- `synthesize(SynthConfig(mode="lensyn" | "rft", ...))`: K samples per eligible pool prompt, judged by the
  one checker, exact passes kept as ChatML rows (k0, prompt, bare answer), streamed to disk with
  resume, with provenance and the holdout contamination audit.
- `--shard I/N` runs one round-robin slice of the prompts; `merge` joins finished shards into
  the run the unsharded command would have written (`rsi_hub.synth.shards`).
- The pool selection, served prompts and provenance helpers are also what the RLVR trainer
  (`rsi_hub.train.rlvr`, card section 6) draws its prompts with.

Uses `rsi_hub.checker`, `rsi_hub.suites` and `rsi_hub.chat`; nothing else of the package.
"""

from rsi_hub.suites.answers import FINAL_MARKER, Extraction, Malformed, extract_final
from rsi_hub.suites.prompts import PoolPrompt
from rsi_hub.synth.api import ContaminationError, merge, synthesize
from rsi_hub.synth.backends import (
    Generation,
    GenerationBackend,
    GenerationRequest,
    SamplingSettings,
    make_backend,
)
from rsi_hub.synth.config import SynthConfig
from rsi_hub.synth.filter import MODES, judge_generation
from rsi_hub.synth.prompts import load_scaffold
from rsi_hub.synth.run import SynthSpec, run_synthesis

__all__ = [
    "FINAL_MARKER",
    "MODES",
    "ContaminationError",
    "Extraction",
    "Generation",
    "GenerationBackend",
    "GenerationRequest",
    "Malformed",
    "PoolPrompt",
    "SamplingSettings",
    "SynthConfig",
    "SynthSpec",
    "extract_final",
    "judge_generation",
    "load_scaffold",
    "make_backend",
    "merge",
    "run_synthesis",
    "synthesize",
]
