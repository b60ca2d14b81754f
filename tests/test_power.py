"""`rsi-hub power`: exact power of the acceptance rule's paired test, checked against enumeration."""

from __future__ import annotations

import itertools
import json
import math
import re
from pathlib import Path
from statistics import NormalDist

import pytest

from rsi_hub.cli import main
from rsi_hub.errors import ConfigError
from rsi_hub.evaluate.power import (
    Discordance,
    critical_a_only,
    exact_power,
    min_detectable_gain,
    normal_power,
    power_at,
    required_prompts,
)
from rsi_hub.evaluate.power_report import PowerConfig, power_report
from rsi_hub.evaluate.stats import gain_is_significant, mcnemar_exact_p, paired_counts

README = Path(__file__).resolve().parents[1] / "README.md"


@pytest.mark.parametrize("alpha", [0.05, 0.01, 0.2, 0.25])
def test_critical_values_are_the_acceptance_rule_split_by_split(alpha: float) -> None:
    table = critical_a_only(120, alpha)
    for d in range(121):
        accepted = [a for a in range(d + 1) if gain_is_significant(a, d - a, alpha)]
        # Accepted splits are exactly a_only = 0..k[d]: a prefix, so one number describes them.
        assert accepted == list(range(table[d] + 1)), d


@pytest.mark.parametrize("d", [818, 2999, 3000])
def test_critical_values_on_large_tables_sit_on_the_exact_boundary(d: int) -> None:
    k = int(critical_a_only(3000, 0.05)[d])
    assert mcnemar_exact_p(k, d - k) < 0.05 <= mcnemar_exact_p(k + 1, d - k - 1)


def test_exact_power_equals_enumerating_every_pair_of_outcome_vectors() -> None:
    # Every one of the 3^8 per-prompt outcome vectors (A-only win, B-only win, tie), scored the
    # way `rsi-hub compare` scores two runs: pass/fail vectors -> counts -> the paired test.
    n, q_loss, q_gain, alpha = 8, 0.05, 0.5, 0.1
    kinds = {"loss": (True, False, q_loss), "gain": (False, True, q_gain)}
    kinds["tie"] = (True, True, 1.0 - q_loss - q_gain)
    expected = 0.0
    for outcome in itertools.product(kinds.values(), repeat=n):
        counts = paired_counts([o[0] for o in outcome], [o[1] for o in outcome])
        if gain_is_significant(counts.a_only, counts.b_only, alpha):
            expected += math.prod(o[2] for o in outcome)
    assert expected > 0.1  # the case is not vacuous
    assert exact_power(n, q_loss, q_gain, alpha) == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize(("q_loss", "q_gain"), [(0.03, 0.09), (0.2, 0.3), (0.0, 0.25)])
def test_exact_power_equals_the_multinomial_sum_at_n_20(q_loss: float, q_gain: float) -> None:
    n, alpha = 20, 0.05
    expected = 0.0
    for a in range(n + 1):
        for b in range(n + 1 - a):
            if gain_is_significant(a, b, alpha):
                ways = math.comb(n, a) * math.comb(n - a, b)
                expected += ways * q_loss**a * q_gain**b * (1 - q_loss - q_gain) ** (n - a - b)
    assert exact_power(n, q_loss, q_gain, alpha) == pytest.approx(expected, rel=1e-12)


def test_closed_forms_for_tiny_suites() -> None:
    # With p0 = 0 nothing can be lost. On 6 prompts only 6 B-only wins are significant
    # (p = 2/64); on 7, 7 wins (p = 2/128) or 6 wins and a tie (p = 2/64).
    assert min_detectable_gain(6, 0.0) == pytest.approx(0.8 ** (1 / 6), abs=1e-8)
    g = 0.9
    assert power_at(7, 0.0, g) == pytest.approx(g**7 + 7 * g**6 * (1 - g), rel=1e-12)
    assert min_detectable_gain(5, 0.0) is None  # 5 of 5 wins gives p = 1/16: never accepted


def test_normal_approximation_is_connors_formula() -> None:
    n, q_loss, q_gain, alpha = 818, 0.034, 0.064, 0.05
    z = NormalDist().inv_cdf(1 - alpha / 2)
    gain, disc = q_gain - q_loss, q_loss + q_gain
    expected = NormalDist().cdf(
        (gain * math.sqrt(n) - z * math.sqrt(disc)) / math.sqrt(disc - gain**2)
    )
    assert normal_power(n, q_loss, q_gain, alpha) == pytest.approx(expected, rel=1e-12)


def test_the_detectable_gain_is_where_power_crosses_the_target() -> None:
    gain = min_detectable_gain(818, 0.566)
    assert gain is not None
    assert power_at(818, 0.566, gain) == pytest.approx(0.8, abs=1e-6)
    assert power_at(818, 0.566, gain - 1e-4) < 0.8 <= power_at(818, 0.566, gain)
    # The same gain needs exactly the suite it was computed for.
    assert required_prompts(gain, 0.566) == 818


def test_more_prompts_detect_smaller_gains() -> None:
    gains = [min_detectable_gain(n, 0.566) for n in (100, 263, 500, 818, 1500, 3000)]
    assert all(a > b for a, b in itertools.pairwise(gains)), gains
    # The card's two suites at the IF-3k baseline 1,697/3,000: IF-3k resolves half the gain.
    assert round(100 * gains[3], 2) == 3.18 and round(100 * gains[5], 2) == 1.50


def test_power_never_drops_as_prompts_are_added_so_bisection_finds_the_first_n() -> None:
    powers = [power_at(n, 0.46, 0.05) for n in range(1, 400)]
    assert all(b >= a - 1e-12 for a, b in itertools.pairwise(powers))
    first = 1 + next(i for i, p in enumerate(powers) if p >= 0.8)
    assert required_prompts(0.05, 0.46) == first


def test_independent_outcomes_are_the_conservative_bound() -> None:
    paired = min_detectable_gain(818, 0.46)
    independent = min_detectable_gain(818, 0.46, model=Discordance(None))
    assert paired is not None and independent is not None and independent > 2 * paired
    assert Discordance(None).rates(0.4, 0.1) == pytest.approx((0.4 * 0.5, 0.6 * 0.5))
    assert Discordance(0.06).rates(0.5, 0.02) == pytest.approx((0.03, 0.05))


def test_a_gain_beyond_the_suite_is_reported_as_unreachable() -> None:
    assert required_prompts(0.001, 0.566, max_prompts=5000) is None


def test_report_and_json_cli(capsys: pytest.CaptureFixture[str]) -> None:
    assert (
        main(["power", "--suite", "if818", "--baseline", "0.566", "--gain", "0.03", "--json"]) == 0
    )
    data = json.loads(capsys.readouterr().out)
    assert (data["n"], data["suite"], data["discordance"]["flip_rate"]) == (818, "if818", 0.06)
    exact = min_detectable_gain(818, 0.566)
    assert data["min_detectable_gain"]["exact"]["prompts"] == pytest.approx(818 * exact)
    assert data["prompts_needed"]["exact"] == required_prompts(0.03, 0.566)
    assert data["power_on_n"]["exact"] == pytest.approx(power_at(818, 0.566, 0.03))
    # The card's "σ ≈ 13 on 818 checks" is one run's binomial spread at p ≈ 0.69.
    assert round(data["sigma_prompts"]["unpaired"], 1) == round(math.sqrt(818 * 0.566 * 0.434), 1)

    assert main(["power", "--n", "3000", "--baseline", "0.46"]) == 0
    out = capsys.readouterr().out
    line = next(x for x in out.splitlines() if x.startswith("min detectable gain, points"))
    assert line.split()[-2:] == ["+1.37", "+1.34"]


@pytest.mark.parametrize(
    ("argv", "field", "message"),
    [
        (["--n", "0", "--baseline", "0.5"], "n", "--n must be between 1 and 20,000"),
        (
            ["--n", "818", "--baseline", "46"],
            "baseline",
            "--baseline must be a pass rate in [0, 1]",
        ),
        (["--n", "818", "--baseline", "-0.1"], "baseline", "--baseline must be a pass rate"),
        (["--n", "818", "--baseline", "0.5", "--power", "1"], "power", "--power must be strictly"),
        (["--n", "818", "--baseline", "0.5", "--power", "0"], "power", "--power must be strictly"),
        (["--n", "818", "--baseline", "0.5", "--alpha", "1.5"], "alpha", "--alpha must be"),
        (["--n", "818", "--baseline", "0.5", "--flip-rate", "2"], "flip_rate", "--flip-rate must"),
        (["--n", "818", "--baseline", "0.5", "--gain", "0"], "gain", "--gain must be in (0, 0.47]"),
        (["--n", "818", "--baseline", "0.9", "--independent", "--gain", "0.2"], "gain", "(0, 0.1]"),
        (["--n", "818", "--baseline", "1"], "baseline", "leaves the candidate nothing to gain"),
        (["--n", "818", "--suite", "if3k", "--baseline", "0.5"], "suite", "pass one"),
        (["--baseline", "0.5"], "n", "--n (or --suite) is needed"),
    ],
)
def test_bad_values_raise_config_error_naming_the_field(
    argv: list[str], field: str, message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    from rsi_hub.cli import build_parser
    from rsi_hub.cli.dataclass_args import dataclass_from_args

    with pytest.raises(ConfigError, match=re.escape(message)) as err:
        dataclass_from_args(PowerConfig, build_parser().parse_args(["power", *argv]))
    assert err.value.field == field and isinstance(err.value, ValueError)
    assert main(["power", *argv]) == 2
    assert message in capsys.readouterr().err


def test_readme_table_is_what_the_calculator_computes() -> None:
    section = README.read_text(encoding="utf-8").split("## Power", 1)[1].split("\n## ", 1)[0]
    header, *rows = [line for line in section.splitlines() if line.startswith("| ")]
    baselines = [float(cell) for cell in re.findall(r"p0 = ([0-9.]+)", header)]
    assert len(baselines) >= 4 and len(rows) >= 3
    for row in rows:  # the |---| line does not start with "| "
        cells = [c.strip() for c in row.strip().strip("|").split("|")]
        suite = {"IF-818": "if818", "IF263": "if263", "IF-3k": "if3k"}[cells[0]]
        for p0, cell in zip(baselines, cells[1:], strict=True):
            report = power_report(PowerConfig(p0, suite=suite))
            gain = report.min_gain["exact"]
            assert gain is not None
            assert cell == f"+{100 * gain:.2f} ({report.config.size * gain:.0f})", (suite, p0)


def test_options_are_generated_from_power_config(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "2000")
    with pytest.raises(SystemExit):
        main(["power", "--help"])
    text = re.sub(r"\s+", " ", capsys.readouterr().out)
    for flag in ("--baseline P0", "--n N", "--suite {if818,if263,if3k}", "--gain DELTA"):
        assert flag in text
    assert "--flip-rate F" in text and "(default 0.06)" in text and "(default 0.8)" in text
    assert PowerConfig(0.5, suite="if263").size == 263
