"""The committed suite files: composition, satisfiability, reproducibility, loading."""

from __future__ import annotations

import hashlib
import json
import subprocess
from pathlib import Path

import pytest

from rsi_hub.checker import check
from rsi_hub.errors import SuiteFileError
from rsi_hub.suites import data_dir, load_suite, reference_response, suite_files, suite_stats
from rsi_hub.suites.ev4_data import CATEGORIES
from rsi_hub.suites.files import MANIFEST, PROMPT_SUITES, parse_rows
from rsi_hub.suites.mixes import IF818_COUNTS

# Card §5, "prompts carrying it": the one literal copy of the card's numbers in the tests (the
# card is the independent source; the generator's table and the CLI test are held to it).
CARD_COUNTS = {
    "word_eq": 86,
    "word_times": 142,
    "sent": 603,
    "contains_norm": 113,
    "no_word": 111,
    "word_max": 53,
    "startswith": 90,
    "endswith": 100,
    "no_char": 88,
    "para": 7,
}
STRUCTURAL = (
    "bullet",
    "numbered",
    "numbered_start",
    "table_rows",
    "json_keys",
    "json_array_len",
    "json_keys_any",
    "is_upper",
)


def test_if818_carrying_counts_equal_card_section_5() -> None:
    suite = load_suite("if818")
    stats = suite_stats(suite.rows)
    assert stats["prompts"] == 818
    carrying = {t: v["prompts"] for t, v in stats["types"].items()}
    assert {t: carrying.get(t) for t in CARD_COUNTS} == CARD_COUNTS
    assert set(carrying) == set(CARD_COUNTS) | set(STRUCTURAL), "no other check types"
    structural_prompts = [r for r in suite if {c["type"] for c in r["checks"]} & set(STRUCTURAL)]
    assert len(structural_prompts) == 26
    assert all(carrying[t] >= 1 for t in STRUCTURAL)
    assert IF818_COUNTS == CARD_COUNTS, "the generator's table is the card's"


def test_suite_sizes_and_ids() -> None:
    sizes = {"if818": 818, "if263": 263, "if3k": 3000, "ev4": 82}
    for name, size in sizes.items():
        rows = load_suite(name).rows
        assert len(rows) == size
        assert [r["id"] for r in rows] == [f"{name}-{i:04d}" for i in range(1, size + 1)]


@pytest.mark.parametrize("name", PROMPT_SUITES)
def test_every_prompt_is_satisfiable_by_the_reference_responder(name: str) -> None:
    failures = []
    for row in load_suite(name):
        verdict = check(reference_response(row), row["checks"])
        if not verdict.passed:
            failures.append((row["id"], [r.reason for r in verdict.results if not r.passed]))
    assert not failures, failures[:5]


def test_no_exact_duplicate_prompts_within_a_suite() -> None:
    for name in PROMPT_SUITES:
        prompts = [r["prompt"] for r in load_suite(name)]
        assert len(set(prompts)) == len(prompts), name


def test_regenerating_gives_the_committed_bytes() -> None:
    built = suite_files()
    folder = data_dir()
    committed = {p.name: p.read_bytes() for p in folder.iterdir() if p.is_file()}
    assert set(built) == set(committed)
    for name, data in built.items():
        assert data == committed[name], f"{name} differs from a fresh build"


def test_manifest_works_with_sha256sum() -> None:
    folder = data_dir()
    for line in (folder / MANIFEST).read_text().splitlines():
        digest, name = line.split("  ")
        assert hashlib.sha256((folder / name).read_bytes()).hexdigest() == digest
    done = subprocess.run(["sha256sum", "-c", MANIFEST], cwd=folder, capture_output=True)
    assert done.returncode == 0, done.stdout


def test_ev4_has_82_prompts_115_checks_12_categories() -> None:
    rows = load_suite("ev4").rows
    assert len(rows) == 82
    assert sum(len(r["checks"]) for r in rows) == 115
    assert {r["category"] for r in rows} == set(CATEGORIES) and len(CATEGORIES) == 12
    assert all(r.get("reference") for r in rows)


def _write_suite(tmp_path: Path, lines: list[str]) -> Path:
    path = tmp_path / "prompts_custom.jsonl"
    path.write_text("\n".join(lines) + "\n")
    return path


GOOD = json.dumps(
    {"id": "x-1", "prompt": "Say hi.", "checks": [{"type": "word_max", "n": 5}], "category": "chat"}
)


def test_loader_accepts_a_good_path_and_reports_a_malformed_row_with_its_line(
    tmp_path: Path,
) -> None:
    assert len(load_suite(_write_suite(tmp_path, [GOOD]))) == 1
    path = _write_suite(tmp_path, [GOOD, '{"id": "x-2", "prompt": "oops"'])
    with pytest.raises(SuiteFileError, match=r"prompts_custom\.jsonl:2: not valid JSON"):
        load_suite(path)


@pytest.mark.parametrize(
    ("row", "message"),
    [
        (
            {
                "id": "x-2",
                "prompt": "Hi.",
                "checks": [{"type": "word_eq", "n": -1}],
                "category": "c",
            },
            r":2: field 'checks': .*word_eq",
        ),
        (
            {"id": "x-2", "prompt": "Hi.", "checks": [{"type": "no_such"}], "category": "c"},
            r":2: field 'checks': .*no_such",
        ),
        ({"id": "x-2", "prompt": "Hi.", "checks": [], "category": "c"}, r":2: field 'checks'"),
        (
            {"id": "x-2", "prompt": "", "checks": [{"type": "is_upper"}], "category": "c"},
            r":2: field 'prompt'",
        ),
        (
            {"id": "x-2", "prompt": "Hi.", "checks": [{"type": "is_upper"}]},
            r":2: field 'category': missing",
        ),
        (
            {"id": "x-1", "prompt": "Hi.", "checks": [{"type": "is_upper"}], "category": "c"},
            r":2: field 'id': 'x-1' already used on line 1",
        ),
        (
            {
                "id": "x-2",
                "prompt": "Hi.",
                "checks": [{"type": "is_upper"}],
                "category": "c",
                "extra": 1,
            },
            r":2: field 'extra': unknown",
        ),
    ],
)
def test_loader_rejects_bad_rows_naming_line_and_field(
    tmp_path: Path, row: dict, message: str
) -> None:
    with pytest.raises(SuiteFileError, match=message):
        load_suite(_write_suite(tmp_path, [GOOD, json.dumps(row)]))


def test_loader_verifies_the_manifest(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("prompts_if818.jsonl", MANIFEST):
        (tmp_path / name).write_bytes((data_dir() / name).read_bytes())
    monkeypatch.setenv("RSI_HUB_SUITES_DIR", str(tmp_path))
    assert len(load_suite("if818")) == 818
    with (tmp_path / "prompts_if818.jsonl").open("a") as f:
        f.write(GOOD + "\n")
    with pytest.raises(SuiteFileError, match="does not match SHA256SUMS"):
        load_suite("if818")
    assert len(load_suite("if818", verify=False)) == 819


def test_loader_errors_for_unknown_names() -> None:
    with pytest.raises(SuiteFileError, match="no suite named"):
        load_suite("if999")
    with pytest.raises(SuiteFileError, match="load_pref"):
        load_suite("pref_demo")


def test_parse_rows_rejects_blank_lines() -> None:
    with pytest.raises(SuiteFileError, match=":2: empty line"):
        parse_rows((GOOD + "\n\n").encode() + GOOD.encode(), "f")


def test_ev4_checks_reject_a_non_answer() -> None:
    # Only the open chat prompts, judged on answering at all, accept any non-refusal.
    lenient = {"ev4-0058", "ev4-0061", "ev4-0063"}
    for row in load_suite("ev4"):
        passed = check("Sorry, no idea.", row["checks"]).passed
        assert passed == (row["id"] in lenient), row["id"]
