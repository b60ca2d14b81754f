"""Figures for experiment write-ups and the release card (PNG, matplotlib's Agg backend).

- `plot_dose_response`: a metric against a swept setting (card section 2: LENARM 100 / 200 / 300
  steps) with 95 % intervals per arm, so that a reader sees at once that the arms lie within
  noise of each other (σ ≈ 13 checks on IF-818).
- `plot_failure_profile`: card section 5's per-check-type failures of one run, or of two runs
  side by side (the PHR12 comparison), from the checker's failure analysis.

Loading (`dose_points`, `failure_profiles`) reads run directories through
`rsi_hub.experiments.evalio`; drawing takes plain data, so it is tested without any run.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from rsi_hub.errors import ExperimentInputError
from rsi_hub.experiments import evalio
from rsi_hub.experiments.stats import wilson_interval
from rsi_hub.rundir import TrainingEvidence

Interval = Literal["wilson", "bootstrap"]
DPI = 150


@dataclass(frozen=True)
class DosePoint:
    """One arm of a dose-response curve: the swept value and its pass count out of n."""

    label: str
    x: float
    passes: int
    n: int


def bootstrap_interval(
    passes: int, n: int, *, level: float = 0.95, iters: int = 10_000, seed: int = 0
) -> tuple[float, float]:
    """Percentile bootstrap interval of a pass rate (items resampled with replacement).

    Resampling n items of which `passes` pass is a Binomial(n, passes / n) draw, so the bootstrap
    is drawn directly as binomials. Same seed, same interval.
    """
    import numpy as np

    if n <= 0:
        raise ValueError("a pass rate needs at least one item")
    draws = np.random.default_rng(seed).binomial(n, passes / n, size=iters) / n
    tail = (1 - level) / 2
    low, high = np.quantile(draws, [tail, 1 - tail])
    return float(low), float(high)


def _interval(passes: int, n: int, kind: Interval) -> tuple[float, float]:
    if kind == "wilson":
        return wilson_interval(passes, n)
    if kind == "bootstrap":
        return bootstrap_interval(passes, n)
    raise ExperimentInputError(
        f"unknown interval {kind!r}: choose wilson or bootstrap.", field="interval"
    )


def _pyplot() -> Any:
    import matplotlib

    matplotlib.use("Agg")  # files only; never a display
    import matplotlib.pyplot as plt

    return plt


def plot_dose_response(
    points: Sequence[DosePoint],
    out: str | Path,
    *,
    x_label: str,
    metric_label: str = "IF-818 pass rate",
    interval: Interval = "wilson",
    reference: DosePoint | None = None,
    title: str | None = None,
) -> Path:
    """Draw pass rate (%) against the swept setting, with 95 % intervals; write a PNG.

    Args:
        points: the arms (sorted by x here).
        out: the PNG path.
        x_label: the swept setting, e.g. `max_steps`.
        metric_label: what the y axis measures.
        interval: `wilson` (score interval) or `bootstrap` (percentile, items resampled).
        reference: an incumbent drawn as a horizontal line with its interval as a band.
        title: figure title (default: metric against setting).
    """
    if not points:
        raise ExperimentInputError("a dose-response plot needs at least one arm with results.")
    plt = _pyplot()
    ordered = sorted(points, key=lambda p: p.x)
    xs = [p.x for p in ordered]
    rates = [100 * p.passes / p.n for p in ordered]
    bounds = [_interval(p.passes, p.n, interval) for p in ordered]
    lower = [r - 100 * lo for r, (lo, _) in zip(rates, bounds, strict=True)]
    upper = [100 * hi - r for r, (_, hi) in zip(rates, bounds, strict=True)]

    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    if reference is not None:
        lo, hi = _interval(reference.passes, reference.n, interval)
        ref = 100 * reference.passes / reference.n
        ax.axhspan(
            100 * lo, 100 * hi, color="0.85", zorder=0, label=f"{reference.label} 95 % interval"
        )
        ax.axhline(
            ref,
            color="0.4",
            ls="--",
            lw=1,
            label=f"{reference.label} ({reference.passes}/{reference.n})",
        )
    ax.errorbar(
        xs, rates, yerr=[lower, upper], fmt="o-", color="C0", capsize=5, lw=1.5,
        label=f"arms, 95 % {interval} interval",
    )  # fmt: skip
    for p, x, r in zip(ordered, xs, rates, strict=True):
        ax.annotate(f"{p.label}\n{p.passes}/{p.n}", (x, r), textcoords="offset points",
                    xytext=(8, 6), fontsize=8)  # fmt: skip
    ax.set_xlabel(x_label)
    ax.set_ylabel(f"{metric_label} (%)")
    ax.set_xticks(xs)
    ax.set_title(title or f"{metric_label} against {x_label}")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, loc="lower right")
    ax.margins(x=0.15)
    return _save(fig, out, plt)


def plot_failure_profile(
    profiles: Mapping[str, Mapping[str, tuple[int, int]]],
    out: str | Path,
    *,
    suite_label: str = "IF-818",
    title: str | None = None,
) -> Path:
    """Bar chart of failing prompts per check type for one or two runs side by side; PNG.

    Args:
        profiles: run name -> check type -> (prompts carrying it, prompts failing it), as the
            checker's failure analysis counts them. One or two runs.
        out: the PNG path.
    """
    if not 1 <= len(profiles) <= 2:
        raise ExperimentInputError(f"a failure profile shows one or two runs, got {len(profiles)}.")
    plt = _pyplot()
    names = list(profiles)
    types = sorted(
        {t for p in profiles.values() for t, (carrying, _) in p.items() if carrying},
        key=lambda t: (-max(p.get(t, (0, 0))[1] for p in profiles.values()), t),
    )
    if not types:
        raise ExperimentInputError("no check type is carried by any prompt: nothing to plot.")
    height = 0.8 / len(names)
    fig, ax = plt.subplots(figsize=(7.2, 0.45 * len(types) + 1.6))
    for i, name in enumerate(names):
        counts = [profiles[name].get(t, (0, 0)) for t in types]
        ys = [k + (i - (len(names) - 1) / 2) * height for k in range(len(types))]
        bars = ax.barh(ys, [f for _, f in counts], height=height, color=f"C{i}", label=name)
        for bar, (carrying, failing) in zip(bars, counts, strict=True):
            rate = f" ({100 * failing / carrying:.0f} %)" if carrying else ""
            ax.annotate(f"{failing}/{carrying}{rate}", (bar.get_width(), bar.get_y() + bar.get_height() / 2),
                        xytext=(3, 0), textcoords="offset points", va="center", fontsize=7)  # fmt: skip
    from matplotlib.ticker import MaxNLocator

    ax.xaxis.set_major_locator(MaxNLocator(integer=True))  # counts of prompts
    ax.set_yticks(range(len(types)))
    ax.set_yticklabels(types)
    ax.invert_yaxis()  # the largest loss on top, as in the card's table
    ax.set_xlabel(f"{suite_label} prompts failing the check (failing/carrying, miss rate)")
    ax.set_title(title or f"Failure profile per check type: {' vs '.join(names)}")
    ax.grid(axis="x", alpha=0.3)
    ax.margins(x=0.25)
    ax.legend(fontsize=8, loc="lower right")
    return _save(fig, out, plt)


def _save(fig: Any, out: str | Path, plt: Any) -> Path:
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.tight_layout()
    fig.savefig(out, dpi=DPI)
    plt.close(fig)
    return out


def setting_of(run: Path, key: str, sweep_points: Mapping[str, Mapping[str, str]] | None) -> float:
    """The value of the swept setting `key` for `run`: its sweep point, else its evidence.

    Raises:
        RsiHubError: the run records no such setting, or it is not a number.
    """
    value: Any = None
    if sweep_points and run.name in sweep_points:
        value = sweep_points[run.name].get(key)
    if value is None:
        record = TrainingEvidence.read_if_any(run)
        evidence = record.to_json() if record is not None else {}
        for section in ("hyperparameters", "recipe"):
            value = (evidence.get(section) or {}).get(key)
            if value is not None:
                break
        if value is None:
            value = evidence.get(key)
    if value is None:
        raise ExperimentInputError(
            f"{run} records no {key!r} (training_evidence.json hyperparameters/recipe, or the "
            "sweep manifest): pass --sweep or choose another --x.",
            path=run,
            field=key,
        )
    try:
        return float(value)
    except (TypeError, ValueError):
        raise ExperimentInputError(
            f"{run}: {key}={value!r} is not a number.", path=run, field=key
        ) from None


def dose_points(
    runs: Sequence[Path],
    *,
    suite: str,
    x_key: str,
    sweep_points: Mapping[str, Mapping[str, str]] | None = None,
) -> list[DosePoint]:
    """One `DosePoint` per run from its `eval/<suite>/` pass count and its swept setting."""
    points = []
    for run in runs:
        result = evalio.read_suite(run, suite)
        points.append(
            DosePoint(run.name, setting_of(run, x_key, sweep_points), result.passes, result.n)
        )
    return points


def reference_point(run: Path, suite: str) -> DosePoint:
    """An incumbent's pass count on `suite`, for the reference line."""
    result = evalio.read_suite(run, suite)
    return DosePoint(run.name, 0.0, result.passes, result.n)


def failure_profiles(
    runs: Sequence[Path], suite: str = "if818"
) -> dict[str, dict[str, tuple[int, int]]]:
    """Per run: check type -> (carrying, failing), from evaluate's failure report (the checker)."""
    return {run.name: evalio.failure_counts(run, suite) for run in runs}
