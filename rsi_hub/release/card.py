"""Rendering a release's model card (`README.md`) from its facts and the run's evaluation results."""

from __future__ import annotations

import re
from dataclasses import dataclass

import jinja2
import yaml

from rsi_hub.chat import load_system_prompt, templates_dir
from rsi_hub.release.eval_results import SuiteResult
from rsi_hub.release.facts import Facts, Table
from rsi_hub.rundir import DOSE_RESPONSE_FILE, ReplicationReport

CARD_TEMPLATE = "model_card.md.jinja"
# Marks a card cell replaced by a measured value that differs from what the facts state.
DIFFERS_MARK = "‡"


@dataclass(frozen=True)
class RenderedCard:
    """The card text and the notes on measured values that differ from the facts."""

    text: str
    notes: list[str]


# Special tokens such as `<|im_start|>` and `</s>`: raw HTML to Markdown. In a code span they read
# as written in the raw file too, where `&lt;|im_start|>` would not.
_TOKEN = re.compile(r"(<[^<>\s`]{1,40}>)")
_CODE_SPAN = re.compile(r"(`[^`]*`)")


def md(text: str) -> str:
    """Make card text safe for Markdown: special tokens (`<|im_end|>`, `</s>`) become code spans,
    any other `<` (raw HTML) is escaped and `*` (emphasis, as in `prompts*.jsonl`) too; existing
    code spans are kept as they are."""
    out: list[str] = []
    for i, part in enumerate(_CODE_SPAN.split(text)):
        if i % 2:  # already a code span: Markdown shows it verbatim
            out.append(part)
            continue
        for j, piece in enumerate(_TOKEN.split(part)):
            out.append(f"`{piece}`" if j % 2 else piece.replace("<", "&lt;").replace("*", "\\*"))
    return "".join(out)


def md_cell(text: str) -> str:
    """`md` for a table cell, where `|` would also end the cell."""
    return md(text).replace("|", "\\|")


def markdown_table(header: list[str], rows: list[list[str]]) -> str:
    """A GitHub-flavoured Markdown table; every cell is escaped with `md_cell`."""
    lines = ["| " + " | ".join(md_cell(cell) for cell in header) + " |"]
    lines.append("|" + "---|" * len(header))
    lines.extend("| " + " | ".join(md_cell(cell) for cell in row) + " |" for row in rows)
    return "\n".join(lines)


def _fill_measured(
    facts: Facts, results: dict[str, SuiteResult]
) -> tuple[dict[str, list[list[str]]], list[str]]:
    """Each table's rows with the uploaded checkpoint's cells taken from `results`.

    A cell that already states the measured score keeps its text (the card's own formatting);
    an empty cell (`—`) gets the measured value; a cell stating another value gets the measured
    value marked with DIFFERS_MARK and a note, so a card never shows a number these weights did
    not score next to results that they did.
    """
    rows = {name: [list(row) for row in table.rows] for name, table in facts.tables.items()}
    notes: list[str] = []
    for section in facts.sections:
        for measured in section.measured:
            table: Table = facts.tables[measured.table]
            row_index = table.row_index(measured.row)
            assert row_index is not None, "load_facts checks that measured rows exist"
            row = rows[measured.table][row_index]
            for column, suite in measured.columns.items():
                result = results.get(suite)
                if result is None:
                    continue
                index = table.header.index(column)
                stated = row[index]
                if result.agrees_with(stated):
                    continue
                if stated.strip() in ("", "—", "-"):
                    row[index] = result.display
                    continue
                row[index] = f"{result.display} {DIFFERS_MARK}"
                notes.append(
                    f"{DIFFERS_MARK} {measured.row}, {column}: measured {result.display} on these "
                    f"weights by rsi-hub eval ({result.folder.name}); the release facts state "
                    f"{stated} ({facts.folder.name}/{measured.table})."
                )
    return rows, notes


def _pct(passed: int, n: int) -> str:
    return f"{100 * passed / n:.1f} % ({passed}/{n})" if n else "—"


def replication_markdown(report: ReplicationReport, has_plot: bool) -> str:
    """The card's replication section from the run's `replication.json`: every round's scores
    with the sha256 of the weights that scored them, the verdicts, the guards, the failure
    profile, the dose-response plot and what the suites can detect."""
    rounds = report.rounds
    header = ["model", "steps", "IF-818 prompt-level", "IF-818 check-level", "IF263", "EV4",
              "scored prompts", "weights sha256"]  # fmt: skip
    rows = []
    for r in rounds:
        guards = r.get("guards") or {}
        limit = r.get("limit")
        winner = " (released)" if r["model"] == report.winner else ""
        rows.append([
            f"{r['label']}{winner}", str(r["steps"]), _pct(r["passed"], r["n"]),
            _pct(r["check_passed"], r["check_n"]),
            f"{guards['if263']:g}" if guards.get("if263") is not None else "—",
            f"{guards['ev4']:g}" if guards.get("ev4") is not None else "—",
            f"first {limit}" if limit else "all", f"`{r['weights_sha256'][:16]}…`",
        ])  # fmt: skip
    parts = [
        "## Replication: the card's method at CPU scale",
        md(
            f"Every number below was measured by `rsi-hub eval` on the weights whose sha256 it "
            f"names (checker {report.checker_version}; {report.protocol}). Check level counts "
            "(prompt, check type) pairs that pass, as `rsi-hub failures` tabulates them."
        ),
        markdown_table(header, rows),
    ]
    labels = {r["model"]: r["label"] for r in rounds}
    data = report.extra.get("round1_data") or {}
    if data:
        rows_by_source = data.get("rows_per_source") or {}
        parts.append(
            md(
                f"Round 1's data: round 0 sampled {data.get('samples_generated')} answers for "
                f"{data.get('fresh_prompts')} fresh pool prompts (never in round 0's data) and "
                f"the checker kept {data.get('samples_kept')}; round 1 trained on the mix "
                f"`{data.get('mix')}`: "
                + ", ".join(f"{n} {name} rows" for name, n in sorted(rows_by_source.items()))
                + "."
            )
        )
    verdicts = [
        f"- {md(labels[c['candidate']])} vs {md(labels[c['incumbent']])}: {c['n']} paired "
        f"prompts ({c['a']} and {c['b']} passing), A only {c['a_only']}, "
        f"B only {c['b_only']}, exact McNemar p = {c['mcnemar_p']:.3g}. {md(c['verdict'])}"
        for c in report.comparisons
    ]
    parts += ["### Verdicts (`rsi-hub compare`)", "\n".join(verdicts)]
    guards = [
        f"- {md(g['label'])} ({md(g['metric'])}) >= {g['threshold']:g} against an incumbent "
        "without it"
        + (f", else the incumbent's value - {g['max_drop']:g}" if g.get("max_drop") else "")
        + f": {md(str(g['why']).strip())}"
        for g in report.guards
    ]
    parts += ["### Guards at this scale", "\n".join(guards)]
    types = sorted({t for profile in report.failures.values() for t in profile})
    profile_rows = [
        [t, *(
            "{}/{}".format(*report.failures[m][t]) if t in report.failures.get(m, {}) else "—"
            for m in labels
        )]
        for t in types
    ]  # fmt: skip
    parts += [
        "### Failure profile (IF-818, passing / carrying, per check type)",
        markdown_table(["check type", *labels.values()], profile_rows),
    ]
    if has_plot:
        parts += [
            "### Dose-response",
            f"![IF-818 pass rate over the rounds, 95 % intervals]({DOSE_RESPONSE_FILE})",
        ]
    parts += ["### What the suites can detect (`rsi-hub power`)",
              "\n".join(f"- {md(line)}" for line in report.power)]  # fmt: skip
    return "\n\n".join(parts) + "\n\n"


def front_matter(facts: Facts) -> str:
    """The Hub's YAML metadata block (without the `---` fences)."""
    return yaml.safe_dump(facts.hub_metadata, sort_keys=False, allow_unicode=True, width=10**9)


def render_card(
    facts: Facts,
    *,
    results: dict[str, SuiteResult],
    weights_sha256: str,
    replication: str | None = None,
) -> RenderedCard:
    """Render `README.md` for a release with `templates/model_card.md.jinja`.

    Args:
        facts: the release's facts folder, loaded.
        results: the run's evaluation results, already checked against `weights_sha256`.
        weights_sha256: the released weights' hash, printed in the card.
        replication: the replication section (`replication_markdown`), for a replication's run.
    """
    rows, notes = _fill_measured(facts, results)
    tables = {
        name: markdown_table(table.header, rows[name]) for name, table in facts.tables.items()
    }
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(templates_dir()),
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        undefined=jinja2.StrictUndefined,
        autoescape=False,  # Markdown, not HTML: text is escaped by the `md` filter instead.
    )
    env.filters["md"] = md
    text = env.get_template(CARD_TEMPLATE).render(
        front_matter=front_matter(facts),
        repo_id=facts.repo_id,
        title=facts.title,
        intro=facts.intro,
        sections=facts.sections,
        has_evaluation_section=any(s.key == "evaluation" for s in facts.sections),
        tables=tables,
        system_prompt=load_system_prompt(),
        measured=[results[s] for s in sorted(results)],
        weights_sha256=weights_sha256,
        replication=replication,
        notes=notes,
    )
    return RenderedCard(text=text, notes=notes)
