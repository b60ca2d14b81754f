"""The release facts and the model card rendered from them (no model is loaded here)."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
import yaml

from rsi_hub.errors import ReleaseError
from rsi_hub.release.card import DIFFERS_MARK, front_matter, md, md_cell, render_card
from rsi_hub.release.eval_results import SuiteResult
from rsi_hub.release.facts import facts_root, load_facts

CARD = Path(__file__).parent / "data" / "RSIAgent-Delta-model-card.txt"
WEIGHTS = "ab" * 32


def _readme_lines(text: str) -> set[str]:
    """The card's lines with Markdown undone: headings, bullets, quotes, escapes, table pipes."""
    lines = set()
    for line in text.splitlines():
        line = line.replace("&lt;", "<").replace("\\*", "*").replace("\\|", "\x00")
        line = re.sub(r"`(<[^`]*>)`", r"\1", line)  # special tokens are code spans
        line = line.strip()
        if line.startswith("|") and line.endswith("|"):
            line = "\t".join(cell.strip() for cell in line.strip("|").split("|"))
        line = re.sub(r"^(#+|-|>) ", "", line).replace("\x00", "|")
        lines.add(line)
    return lines


def _result(suite: str, **kwargs: object) -> SuiteResult:
    return SuiteResult(suite=suite, folder=Path(suite), weights_sha256=WEIGHTS, **kwargs)


def test_card_holds_every_line_of_the_reference_card() -> None:
    text = render_card(load_facts("LA2b200s"), results={}, weights_sha256=WEIGHTS).text
    rendered = _readme_lines(text)
    missing = []
    for line in CARD.read_text(encoding="utf-8").splitlines():
        line = line.strip().removeprefix("• ")
        if line and line not in rendered:
            missing.append(line)
    assert missing == []


def test_card_front_matter_is_hub_metadata() -> None:
    text = render_card(load_facts("LA2b200s"), results={}, weights_sha256=WEIGHTS).text
    assert text.startswith("---\n")
    metadata = yaml.safe_load(text.split("\n---\n")[0].removeprefix("---\n"))
    assert metadata["base_model"] == "nvidia/NVIDIA-Nemotron-3.5-Lightning-30B-A3B-Base-BF16"
    assert metadata["base_model_relation"] == "finetune"
    assert metadata["library_name"] == "transformers"
    assert metadata["pipeline_tag"] == "text-generation"
    assert metadata["license"] == "openmdw-1.1"
    assert "allenai/tulu-3-sft-mixture" in metadata["datasets"]
    assert "nemotron_h" in metadata["tags"]


def test_measured_cells_keep_agreeing_text_fill_dashes_and_flag_differences() -> None:
    facts = load_facts("LA2b200s")
    results = {
        "if818": _result("if818", value=562 / 818, passed=562, n=818),  # as the card says
        "if263": _result("if263", value=190 / 263, passed=190, n=263),  # differs from 193
        "mmlu": _result("mmlu", value=0.7149),
    }
    card = render_card(facts, results=results, weights_sha256=WEIGHTS)
    assert "| LA2b200s (uploaded) | 562 | 190/263 ‡ | 104/115 | 0.6182 | 0.7149 |" in card.text
    assert len(card.notes) == 2  # the IF263 cell of both tables that hold the uploaded row
    assert all(DIFFERS_MARK in note and "193" in note for note in card.notes)
    assert "| if818 | 562/818 | 818 | none |" in card.text  # the measured-results table

    tiny = render_card(
        load_facts("tiny"), results={"pref": _result("pref", value=0.25)}, weights_sha256=WEIGHTS
    )
    assert "| tiny (uploaded) | — | — | — | 0.2500 | — |" in tiny.text
    assert tiny.notes == []


def test_every_facts_folder_loads_and_renders() -> None:
    names = sorted(p.name for p in facts_root().iterdir() if p.is_dir())
    assert {"LA2b200s", "tiny"} <= set(names)
    for name in names:
        facts = load_facts(name)
        text = render_card(facts, results={}, weights_sha256=WEIGHTS).text
        # Front matter, repository, title; then every section of the facts, in their order.
        head = f"---\n{front_matter(facts)}---\n\n# {facts.repo_id}\n\n## {facts.title}\n\n"
        assert text.startswith(head), name
        headings = re.findall(r"^## (.+)$", text, flags=re.MULTILINE)
        expected = [facts.title, *(section.heading for section in facts.sections)]
        if not any(section.key == "evaluation" for section in facts.sections):
            expected.append("Measured results")
        assert headings == [*expected, "Usage", "Integrity"], name
        assert text.endswith(f"\n`{WEIGHTS}`\n"), name


def test_tiny_card_shows_special_tokens_as_code() -> None:
    """`<|im_start|>` escaped as `&lt;|im_start|>` reads wrong in the raw README: code spans."""
    text = render_card(load_facts("tiny"), results={}, weights_sha256=WEIGHTS).text
    assert (
        "- Chat template: ChatML (`<|im_start|>`role\\n … `<|im_end|>`\\n), stored in "
        "chat_template.jinja and tokenizer_config.json.\n"
    ) in text
    assert (
        "- End-of-turn token: `<|im_end|>` (id 11); `</s>` (id 2) also stops generation.\n" in text
    )
    assert "&lt;" not in text


@pytest.mark.parametrize(
    ("escape", "text", "markdown"),
    [
        (md, "stop at <|im_end|> or </s>", "stop at `<|im_end|>` or `</s>`"),
        (md, "kept: `<|im_end|>`, a*b", "kept: `<|im_end|>`, a\\*b"),
        (md, "x < y and <b >", "x &lt; y and &lt;b >"),
        (md_cell, "a | b <s>", "a \\| b `<s>`"),  # GFM reads `\|` as `|` even in code spans
    ],
)
def test_markdown_escaping(escape, text: str, markdown: str) -> None:
    assert escape(text) == markdown


@pytest.fixture
def facts_copy(tmp_path: Path) -> Path:
    shutil.copytree(facts_root() / "tiny", tmp_path / "tiny")
    return tmp_path


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda f: (f / "evaluation.tsv").unlink(), "evaluation.tsv: missing"),
        (lambda f: (f / "evaluation.tsv").write_text("a\tb\nonly-one-cell\n"), "line 2 has 1"),
        (lambda f: (f / "LICENSE").write_text(""), "LICENSE: missing or empty"),
        (lambda f: (f / "release.yaml").write_text("name: tiny\n"), "hub_metadata"),
        (
            lambda f: (f / "evaluation.yaml").write_text(
                (f / "evaluation.yaml").read_text().replace("row: tiny (uploaded)", "row: nope")
            ),
            "measured row 'nope'",
        ),
    ],
)
def test_broken_facts_name_the_file(facts_copy: Path, edit, message: str) -> None:
    edit(facts_copy / "tiny")
    with pytest.raises(ReleaseError, match=re.escape(message)):
        load_facts("tiny", facts_copy)


def test_unknown_release_name() -> None:
    with pytest.raises(ReleaseError, match="no facts folder for release 'nope'"):
        load_facts("nope")
