"""`PowerConfig` (every option of `rsi-hub power`) and the report it prints.

The statistics live in `rsi_hub.evaluate.power`; this module validates the question, asks it of
both methods (exact and the normal approximation) and lays the answer out as a table or JSON.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Literal

from rsi_hub.errors import ConfigError
from rsi_hub.evaluate.power import (
    DEFAULT_FLIP_RATE,
    MAX_PROMPTS,
    Discordance,
    Method,
    min_detectable_gain,
    power_at,
    required_prompts,
)
from rsi_hub.suites.build import SUITE_SIZES

SuiteName = Literal["if818", "if263", "if3k"]
SUITE_LABELS: dict[str, str] = {"if818": "IF-818", "if263": "IF263", "if3k": "IF-3k"}
METHODS: tuple[Method, ...] = ("exact", "normal")


@dataclass
class PowerConfig:
    """The question `rsi-hub power` answers; validated on construction (`ConfigError`)."""

    baseline: float = field(
        metadata={
            "metavar": "P0",
            "help": "the incumbent's pass rate on the suite, a fraction (0.566 for 1,697/3,000)",
        }
    )
    n: int | None = field(
        default=None,
        metadata={"metavar": "N", "help": "suite size: report the minimum detectable gain"},
    )
    suite: SuiteName | None = field(
        default=None,
        metadata={"help": "instead of --n: the suite's size (if818 818, if263 263, if3k 3000)"},
    )
    gain: float | None = field(
        default=None,
        metadata={
            "metavar": "DELTA",
            "help": "a true paired gain, a fraction (0.03 = 3 points): report the prompts "
            "needed to detect it, and its power on --n / --suite",
        },
    )
    alpha: float = field(
        default=0.05, metadata={"help": "significance level of the two-sided exact McNemar test"}
    )
    power: float = field(
        default=0.8, metadata={"help": "probability of accepting a candidate with the gain"}
    )
    flip_rate: float = field(
        default=DEFAULT_FLIP_RATE,
        metadata={
            "metavar": "F",
            "help": "discordance: the candidate fails this fraction of the prompts the baseline "
            "passes, and wins as many plus the gain (the card's paired p-values imply 0.05-0.065)",
        },
    )
    independent: bool = field(
        default=False,
        metadata={
            "action": "store_true",
            "help": "instead of --flip-rate, take the candidate's outcome as independent of the "
            "baseline's on each prompt (no pairing benefit: the conservative bound)",
        },
    )
    json: bool = field(
        default=False, metadata={"action": "store_true", "help": "print the report as JSON"}
    )

    def __post_init__(self) -> None:
        def bad(name: str, message: str) -> ConfigError:
            return ConfigError(f"--{name.replace('_', '-')} {message}", field=name)

        if not 0.0 <= self.baseline <= 1.0:
            raise bad(
                "baseline", f"must be a pass rate in [0, 1] (0.46, not 46), got {self.baseline}."
            )
        if self.n is not None and self.suite is not None:
            raise bad("suite", f"and --n {self.n} both give the suite size; pass one.")
        if self.n is not None and not 1 <= self.n <= MAX_PROMPTS:
            raise bad("n", f"must be between 1 and {MAX_PROMPTS:,} prompts, got {self.n}.")
        if self.size is None and self.gain is None:
            raise bad("n", "(or --suite) is needed for a detectable gain, or --gain for a size.")
        for name, value in (("alpha", self.alpha), ("power", self.power)):
            if not 0.0 < value < 1.0:
                raise bad(name, f"must be strictly between 0 and 1, got {value}.")
        if not 0.0 <= self.flip_rate <= 1.0:
            raise bad("flip_rate", f"must be a fraction in [0, 1], got {self.flip_rate}.")
        top = self.model.max_gain(self.baseline)
        if top <= 0.0:
            name = "baseline" if self.independent or self.baseline == 1.0 else "flip_rate"
            raise bad(
                name, "leaves the candidate nothing to gain: lower the baseline or the flip rate."
            )
        if self.gain is not None and not 0.0 < self.gain <= top:
            raise bad(
                "gain",
                f"must be in (0, {top:.4g}] (a fraction, at most what the baseline's failures "
                f"allow under this model), got {self.gain}.",
            )

    @property
    def size(self) -> int | None:
        """The number of prompts: --n, or the size of --suite."""
        return SUITE_SIZES[self.suite] if self.suite is not None else self.n

    @property
    def model(self) -> Discordance:
        """The discordance model the options select."""
        return Discordance(None if self.independent else self.flip_rate)


@dataclass
class PowerReport:
    """What `power_report` found; gains are fractions of the suite, None where unreachable."""

    config: PowerConfig
    min_gain: dict[str, float | None] = field(default_factory=dict)
    prompts_needed: dict[str, int | None] = field(default_factory=dict)
    power_on_n: dict[str, float] = field(default_factory=dict)

    def sigmas(self) -> tuple[float, float] | None:
        """(paired, unpaired) standard deviation in prompts with no true gain: of B - A under the
        model, and of one run's pass count (the card's "σ ≈ 13 on 818 checks")."""
        n, p0 = self.config.size, self.config.baseline
        if n is None:
            return None
        q_loss, q_gain = self.config.model.rates(p0, 0.0)
        return math.sqrt(n * (q_loss + q_gain)), math.sqrt(n * p0 * (1.0 - p0))

    def to_json(self) -> dict[str, Any]:
        """JSON-ready dict: inputs, assumption and, per method, gains in points and prompts."""
        c, n = self.config, self.config.size
        sigmas = self.sigmas()

        def gain(x: float | None) -> dict[str, float] | None:
            if x is None:
                return None
            return {"fraction": x, "points": 100.0 * x, **({"prompts": x * n} if n else {})}

        return {
            "n": n,
            "suite": c.suite,
            "baseline": c.baseline,
            "alpha": c.alpha,
            "power": c.power,
            "discordance": {
                "model": "independent" if c.independent else "flip_rate",
                "flip_rate": None if c.independent else c.flip_rate,
                "assumption": c.model.describe(c.baseline),
            },
            "sigma_prompts": None
            if sigmas is None
            else {"paired": sigmas[0], "unpaired": sigmas[1]},
            "min_detectable_gain": {m: gain(x) for m, x in self.min_gain.items()} or None,
            "gain": c.gain,
            "prompts_needed": self.prompts_needed or None,
            "power_on_n": self.power_on_n or None,
        }


def power_report(config: PowerConfig) -> PowerReport:
    """Answer `config`'s question with the exact computation and the normal approximation."""
    report = PowerReport(config)
    ask = {"alpha": config.alpha, "model": config.model}
    n, p0 = config.size, config.baseline
    for method in METHODS:
        if n is not None:
            report.min_gain[method] = min_detectable_gain(
                n, p0, power=config.power, method=method, **ask
            )
        if config.gain is not None:
            report.prompts_needed[method] = required_prompts(
                config.gain, p0, power=config.power, method=method, **ask
            )
            if n is not None:
                report.power_on_n[method] = power_at(n, p0, config.gain, method=method, **ask)
    return report


def format_power(report: PowerReport) -> str:
    """The table `rsi-hub power` prints."""
    c, n = report.config, report.config.size
    where = f"{SUITE_LABELS[c.suite]}, n = {n}" if c.suite else f"n = {n}" if n else "any n"
    lines = [
        f"{where}; baseline {100 * c.baseline:.1f} %; exact McNemar, two-sided alpha {c.alpha:g}, "
        f"power {c.power:g}",
        f"discordance: {c.model.describe(c.baseline)}",
    ]
    sigmas = report.sigmas()
    if sigmas is not None:
        lines.append(
            f"noise with no gain: σ of B - A = {sigmas[0]:.1f} prompts under this model; "
            f"σ of one run's pass count = {sigmas[1]:.1f} (the card's figure)"
        )
    rows: list[tuple[str, list[str]]] = []
    if report.min_gain:
        gains = [report.min_gain[m] for m in METHODS]
        rows.append(("min detectable gain, points", [_fmt(x, 100.0, "+.2f") for x in gains]))
        rows.append(("min detectable gain, prompts", [_fmt(x, n or 0, "+.1f") for x in gains]))
    if c.gain is not None:
        needed = [report.prompts_needed[m] for m in METHODS]
        shown = [f"{k:,}" if k is not None else f"> {MAX_PROMPTS:,}" for k in needed]
        rows.append((f"prompts to detect {100 * c.gain:+.2f} points", shown))
        if report.power_on_n:
            powers = [f"{report.power_on_n[m]:.3f}" for m in METHODS]
            rows.append((f"power of {100 * c.gain:+.2f} points on {n}", powers))
    width = max(len(label) for label, _ in rows)
    lines.append(f"{'':<{width}}  {'exact':>10}  {'normal':>10}")
    lines += [f"{label:<{width}}  {a:>10}  {b:>10}" for label, (a, b) in rows]
    return "\n".join(lines)


def _fmt(x: float | None, scale: float, spec: str) -> str:
    return "unreachable" if x is None else format(x * scale, spec)
