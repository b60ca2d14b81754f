"""System-prompt search (card section 3): candidates scored on the same items, paired tests.

Every candidate system prompt is evaluated on the same suite items as the incumbent (k0), then
compared to it with the exact McNemar test of `rsi_hub.evaluate`; the p values are Holm-corrected
for the number of candidates, because with 15 candidates a raw p < 0.05 is expected by chance.
A candidate replaces the incumbent only on a corrected, significant gain.

Candidate files are plain text: optional `# key: value` header lines (`id`, `intent`,
`source`), then the prompt. An empty prompt means "no system message"; `# use: served` means the
served prompt k0, read from `rsi_hub.chat` rather than copied.
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rsi_hub.chat import SYSTEM_PROMPT_ID, load_system_prompt
from rsi_hub.errors import ExperimentFileError, ExperimentInputError
from rsi_hub.experiments import evalio
from rsi_hub.experiments.stats import holm
from rsi_hub.experiments.tables import format_p, render_table
from rsi_hub.hashing import weights_sha256

DEFAULT_ALPHA = 0.05


@dataclass(frozen=True)
class Candidate:
    """One system prompt to try. An empty `text` means no system message at all."""

    id: str
    text: str
    intent: str = ""
    source: str = ""

    @property
    def sha256(self) -> str:
        """Digest of the prompt text, recorded so that a result can be matched to its prompt."""
        return hashlib.sha256(self.text.encode("utf-8")).hexdigest()


def parse_candidate(path: str | Path) -> Candidate:
    """Read one candidate file: `# key: value` header lines, then the prompt text."""
    path = Path(path)
    header: dict[str, str] = {}
    lines = path.read_text(encoding="utf-8").splitlines()
    body_start = 0
    for i, line in enumerate(lines):
        if not line.startswith("#"):
            body_start = i
            break
        key, _, value = line[1:].partition(":")
        header[key.strip().lower()] = value.strip()
    else:
        body_start = len(lines)
    text = "\n".join(lines[body_start:]).strip()
    if header.get("use") == "served":
        # The served prompt has one copy (rsi_hub.chat); candidate files refer to it.
        if text:
            raise ExperimentInputError(
                f"{path}: `# use: served` takes no text of its own.", path=path
            )
        text = load_system_prompt()
    return Candidate(
        id=header.get("id", path.stem),
        text=text,
        intent=header.get("intent", ""),
        source=header.get("source", ""),
    )


def load_candidates(path: str | Path) -> list[Candidate]:
    """Candidates from one `.txt` file or every `.txt` file of a folder (name order).

    Raises:
        RsiHubError: nothing found, or two candidates share an id.
    """
    path = Path(path)
    files = sorted(path.glob("*.txt")) if path.is_dir() else [path]
    if not files or not all(f.is_file() for f in files):
        raise ExperimentFileError(f"no candidate prompt files (*.txt) at {path}.", path=path)
    candidates = [parse_candidate(f) for f in files]
    seen: set[str] = set()
    for candidate in candidates:
        if candidate.id in seen:
            raise ExperimentInputError(
                f"two candidate files under {path} have the id {candidate.id!r}.", path=path
            )
        seen.add(candidate.id)
    return candidates


def with_incumbent(candidates: Sequence[Candidate], incumbent: str) -> list[Candidate]:
    """Make sure the incumbent is among the candidates, first.

    The served prompt k0 is always available from `rsi_hub.chat`; if a candidate file also
    claims the id k0 its text must be the served one, or the table would lie about k0.
    """
    by_id = {c.id: c for c in candidates}
    if incumbent == SYSTEM_PROMPT_ID:
        served = Candidate(SYSTEM_PROMPT_ID, load_system_prompt(), "the served prompt", "card §1")
        given = by_id.get(SYSTEM_PROMPT_ID)
        if given is not None and given.text != served.text:
            raise ExperimentInputError(
                f"the candidate file for {SYSTEM_PROMPT_ID} differs from the served prompt "
                "(templates/system_prompt.txt); rename it or fix it."
            )
        by_id[SYSTEM_PROMPT_ID] = given or served
    if incumbent not in by_id:
        raise ExperimentInputError(
            f"incumbent {incumbent!r} is not among the candidates ({', '.join(by_id)}).",
            field="incumbent",
        )
    return [by_id[incumbent], *(c for c in candidates if c.id != incumbent)]


@dataclass(frozen=True)
class PromptRow:
    """One row of the prompt table."""

    rank: int
    id: str
    intent: str
    score: int
    n: int
    incumbent_only: int
    candidate_only: int
    p: float | None
    p_holm: float | None
    verdict: str


def prompt_table(
    outcomes: Mapping[str, evalio.Outcomes],
    incumbent: str,
    *,
    intents: Mapping[str, str] | None = None,
    alpha: float = DEFAULT_ALPHA,
) -> list[PromptRow]:
    """Rank candidates by score and test each against the incumbent (exact McNemar, Holm).

    Args:
        outcomes: per-item pass/fail of every candidate (incumbent included) on the same items.
        incumbent: the id to test against.
        intents: a short description per id, for the table.
        alpha: family-wise error rate of the Holm procedure.

    Returns:
        Rows, incumbent first, then the others by score (ties by id); `rank` orders all rows
        by score. The verdict is "significantly better/worse" only when the Holm-corrected p
        is below `alpha`.
    """
    if incumbent not in outcomes:
        raise ExperimentInputError(
            f"no outcomes for the incumbent {incumbent!r}.", field="incumbent"
        )
    base = outcomes[incumbent]
    others = sorted((c for c in outcomes if c != incumbent), key=lambda c: c)
    raw = [evalio.mcnemar_p(base, outcomes[c]) for c in others]
    adjusted = dict(zip(others, holm(raw), strict=True))
    raw_p = dict(zip(others, raw, strict=True))
    scores = {c: sum(outcomes[c].values()) for c in outcomes}
    ranking = sorted(outcomes, key=lambda c: (-scores[c], c != incumbent, c))
    rows = []
    for cid in [incumbent, *sorted(others, key=lambda c: (-scores[c], c))]:
        keys = evalio.aligned_keys(base, outcomes[cid])
        inc_only = sum(1 for k in keys if base[k] and not outcomes[cid][k])
        cand_only = sum(1 for k in keys if outcomes[cid][k] and not base[k])
        if cid == incumbent:
            verdict = "incumbent"
        elif adjusted[cid] < alpha:
            verdict = "significantly " + ("better" if scores[cid] > scores[incumbent] else "worse")
        else:
            verdict = "not significant"
        rows.append(
            PromptRow(
                rank=ranking.index(cid) + 1,
                id=cid,
                intent=(intents or {}).get(cid, ""),
                score=scores[cid],
                n=len(keys),
                incumbent_only=inc_only,
                candidate_only=cand_only,
                p=raw_p.get(cid),
                p_holm=adjusted.get(cid),
                verdict=verdict,
            )
        )
    return rows


def format_prompt_table(rows: Sequence[PromptRow], *, markdown: bool = False) -> str:
    """The card's prompt table: score and paired p against the incumbent, Holm-corrected."""
    incumbent = rows[0]
    m = len(rows) - 1
    headers = [
        "rank",
        "prompt",
        "score",
        f"Δ vs {incumbent.id}",
        "discordant (inc/cand)",
        "McNemar p",
        f"Holm p (m={m})",
        "verdict",
    ]
    body = []
    for row in rows:
        name = f"{row.id} ({row.intent})" if row.intent else row.id
        delta = "—" if row is incumbent else f"{row.score - incumbent.score:+d}"
        discordant = "—" if row is incumbent else f"{row.incumbent_only}/{row.candidate_only}"
        body.append(
            [
                str(row.rank),
                name,
                f"{row.score}/{row.n}",
                delta,
                discordant,
                format_p(row.p),
                format_p(row.p_holm),
                row.verdict,
            ]
        )
    return render_table(headers, body, markdown=markdown)


Evaluator = Callable[[Path, str, Candidate, str], None]
"""Runs one evaluation: (run, suite, candidate, result folder name under RUN/eval/)."""


def result_folder(suite: str, candidate: Candidate) -> str:
    """Where a candidate's evaluation lives under `RUN/eval/`: beside the served results."""
    return f"{suite}.prompt-{candidate.id}"


def run_prompt_search(
    run: str | Path,
    candidates: Sequence[Candidate],
    *,
    suite: str = "if818",
    incumbent: str = SYSTEM_PROMPT_ID,
    alpha: float = DEFAULT_ALPHA,
    evaluator: Evaluator | None = None,
    reuse: bool = True,
    limit: int | None = None,
    **eval_options: Any,
) -> list[PromptRow]:
    """Evaluate every candidate on `suite` for the weights of `run`, then build the table.

    A candidate whose results already exist for the same weights, prompt text and `limit` is
    not evaluated again (`reuse`), so an interrupted search resumes where it stopped. `limit`
    (the first N items, a smoke test) and `eval_options` (`backend`, `batch_size`, `progress`,
    ...) go to `rsi-hub eval`'s `evaluate_run`.
    """
    run = Path(run)
    candidates = with_incumbent(candidates, incumbent)
    evaluate = evaluator or functools.partial(
        evalio.evaluate_with_system_prompt, limit=limit, **eval_options
    )
    weights = weights_sha256(run)
    outcomes: dict[str, evalio.Outcomes] = {}
    for candidate in candidates:
        folder = result_folder(suite, candidate)
        if not (reuse and _reusable(run, suite, folder, weights, candidate, limit)):
            evaluate(run, suite, candidate, folder)
        outcomes[candidate.id] = evalio.read_suite(run, suite, folder_name=folder).outcomes
    intents = {c.id: c.intent for c in candidates}
    return prompt_table(outcomes, incumbent, intents=intents, alpha=alpha)


def _reusable(
    run: Path, suite: str, folder: str, weights: str, candidate: Candidate, limit: int | None
) -> bool:
    # Same weights, the same items, and the same prompt text when the result records it (an
    # edited candidate file is evaluated again; no system message records no digest).
    if not evalio.has_suite(run, folder):
        return False
    result = evalio.read_suite(run, suite, folder_name=folder)
    recorded = result.meta.system_prompt_sha256
    return (
        result.weights_sha256 == weights
        and result.meta.limit == limit
        and recorded in (None, candidate.sha256)
    )
