"""`rsi-hub plot`: the dose-response curve and the failure profile are drawn and non-empty."""

from __future__ import annotations

from pathlib import Path

import pytest

from rsi_hub.experiments import plots


def _assert_png(path: Path, min_bytes: int = 10_000) -> None:
    import matplotlib.image as mpimg

    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert path.stat().st_size > min_bytes
    image = mpimg.imread(path)
    assert image.shape[0] > 300 and image.shape[1] > 500
    # Something was drawn: far from a single flat colour.
    assert image[..., :3].std() > 0.05


def test_card_lenarm_dose_response(tmp_path: Path) -> None:
    # Card section 2: LENARM 100 / 200 / 300 steps scored 525 / 562 / 555 of 818; b1 552.
    points = [
        plots.DosePoint("LENARM100", 100, 525, 818),
        plots.DosePoint("LENARM300", 300, 555, 818),
        plots.DosePoint("LA2b200s", 200, 562, 818),
    ]
    for interval in ("wilson", "bootstrap"):
        out = plots.plot_dose_response(
            points, tmp_path / f"dose-{interval}.png", x_label="max_steps",
            interval=interval, reference=plots.DosePoint("b1", 0, 552, 818),
        )  # fmt: skip
        _assert_png(out)


def test_bootstrap_interval_is_close_to_wilson() -> None:
    from rsi_hub.experiments.stats import wilson_interval

    low, high = plots.bootstrap_interval(562, 818)
    w_low, w_high = wilson_interval(562, 818)
    assert low < 562 / 818 < high
    assert abs(low - w_low) < 0.005 and abs(high - w_high) < 0.005
    assert plots.bootstrap_interval(562, 818) == (low, high)  # seeded


def test_card_failure_profile_one_and_two_runs(tmp_path: Path) -> None:
    # Card section 5 (LA2b200s) and PHR12's two count checks (word_eq 84, word_times 75).
    la2 = {"word_eq": (86, 80), "word_times": (142, 70), "sent": (603, 52),
           "contains_norm": (113, 22), "no_word": (111, 11), "word_max": (53, 9),
           "startswith": (90, 7), "endswith": (100, 7), "no_char": (88, 3), "para": (7, 2),
           "bullet": (10, 0)}  # fmt: skip
    phr12 = {**la2, "word_eq": (86, 84), "word_times": (142, 75)}
    _assert_png(plots.plot_failure_profile({"LA2b200s": la2}, tmp_path / "one.png"))
    _assert_png(plots.plot_failure_profile({"LA2b200s": la2, "PHR12": phr12}, tmp_path / "two.png"))
    with pytest.raises(Exception, match="one or two runs"):
        plots.plot_failure_profile({"a": la2, "b": la2, "c": la2}, tmp_path / "x.png")


def test_cli_plots_from_run_directories(tmp_path: Path) -> None:
    from rsi_hub.cli import main
    from tests.experiment_logs import make_run, outcomes_with

    runs = []
    for steps, passes in ((100, 40), (200, 48), (300, 45)):
        runs.append(
            make_run(tmp_path / "runs", f"LENARM{steps}", seed=steps,
                     if818=outcomes_with(60, range(passes)),
                     evidence={"kind": "rsi-hub training run", "hyperparameters": {"max_steps": steps}})
        )  # fmt: skip
    dose = tmp_path / "dose.png"
    assert main(["plot", "dose-response", *map(str, runs), "--x", "max_steps",
                 "--reference", str(runs[1]), "--out", str(dose)]) == 0  # fmt: skip
    _assert_png(dose)
    profile = tmp_path / "failures.png"
    assert main(["plot", "failures", str(runs[0]), str(runs[2]), "--out", str(profile)]) == 0
    _assert_png(profile)
    counts = plots.failure_profiles(runs[:1])["LENARM100"]
    # 60 documents rotate through 3 check sets (i % 3); documents 40..59 fail.
    assert counts["word_eq"] == (20, 6) and counts["word_times"] == (20, 7)
    assert counts["no_word"] == (40, 14)
