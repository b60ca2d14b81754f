"""Sweeps (card section 3: the LENARM dose-response, 100 / 200 / 300 steps): a grid of recipe
overrides expanded into named arms, each trained and then evaluated.

An arm is one `rsi-hub train <trainer> --recipe NAME key=value ... name=ARM` followed by one
`rsi-hub eval runs/ARM --suite S` per suite. Locally the arms run one after another. With Slurm
each arm gets a training script, which is train's own template (`launch/slurm_train.sbatch`:
accelerate rendezvous, requeue, and the `train finalize` job that records the final state) with
the arm's arguments filled in, and an evaluation script queued `afterok` on it; all are written
under the sweep folder with a `sweep.json` manifest that `rsi-hub runs` and `rsi-hub plot` read.
"""

from __future__ import annotations

import itertools
import re
import shlex
import shutil
import subprocess
import sys
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

from rsi_hub import slurm
from rsi_hub.errors import ExperimentError, ExperimentInputError
from rsi_hub.experiments import recipes
from rsi_hub.rundir import SweepArm, SweepManifest, TrainingEvidence

DEFAULT_SUITES = ("if818",)
# An arm's evaluation waits for its training to succeed; Slurm cancels it if training fails.
KILL_ON_INVALID_DEP = "--kill-on-invalid-dep=yes"
_UNSAFE = re.compile(r"[^A-Za-z0-9_.+-]+")

Resolver = Callable[[str, dict[str, str]], recipes.ResolvedArm]
Runner = Callable[[list[str]], int]


def parse_grid(specs: Sequence[str]) -> dict[str, list[str]]:
    """Parse `--grid key=v1,v2,...` options into an ordered mapping of key -> values.

    Values stay strings: the train package types them against the recipe.

    Raises:
        RsiHubError: a spec without `=`, an empty value, a repeated key or a repeated value.
    """
    grid: dict[str, list[str]] = {}
    for spec in specs:
        key, sep, values = spec.partition("=")
        key = key.strip()
        items = [v.strip() for v in values.split(",")]
        if not sep or not key or not all(items):
            raise ExperimentInputError(
                f"--grid {spec!r}: write key=v1,v2,... (e.g. max_steps=100,200,300)", field="grid"
            )
        if recipes.recipe_key(key) in {recipes.recipe_key(k) for k in grid}:
            raise ExperimentInputError(
                f"--grid names {key!r} twice: give all its values in one option.", field="grid"
            )
        if len(set(items)) != len(items):
            raise ExperimentInputError(f"--grid {spec!r} repeats a value.", field="grid")
        grid[key] = items
    if not grid:
        raise ExperimentInputError("a sweep needs at least one --grid key=v1,v2,...", field="grid")
    return grid


def expand_grid(grid: dict[str, list[str]]) -> list[dict[str, str]]:
    """Every combination of the grid's values; the first key varies slowest."""
    keys = list(grid)
    return [dict(zip(keys, combo, strict=True)) for combo in itertools.product(*grid.values())]


def arm_name(base: str, point: dict[str, str], template: str | None = None) -> str:
    """The run name of one grid point.

    With a template (`LENARM{max_steps}`) the point's values fill it; otherwise the name is
    `<base>_<key><value>` for every swept key (`LA2b200s_max_steps100_lr4e-7`). Characters a
    file name or Slurm job name would choke on become `-`.
    """
    if template:
        try:
            name = template.format(**point)
        except KeyError as err:
            raise ExperimentInputError(
                f"--name {template!r} uses {err}, which is not a grid key ({', '.join(point)}).",
                field="name",
            ) from None
    else:
        name = "_".join([base, *(f"{k}{v}" for k, v in point.items())])
    return _UNSAFE.sub("-", name).strip("-")


@dataclass
class Arm:
    """One arm of a sweep: its run name, overrides, resolved run directory and commands."""

    name: str
    recipe: str
    point: dict[str, str]
    overrides: dict[str, str]
    trainer: str
    num_gpus: int
    run_dir: str
    suites: list[str]
    eval_args: list[str] = field(default_factory=list)
    jobs: dict[str, str] = field(default_factory=dict)

    def train_argv(self) -> list[str]:
        """`rsi-hub` arguments that train this arm (train's own CLI)."""
        pairs = [f"{recipes.recipe_key(k)}={v}" for k, v in self.overrides.items()]
        return ["train", self.trainer, "--recipe", self.recipe, *pairs, f"name={self.name}"]

    def eval_argv(self, suites: Sequence[str] | None = None) -> list[str]:
        """`rsi-hub` arguments that evaluate this arm on `suites` (default: all of the arm's)
        in one call, so that the model is loaded once."""
        chosen = ",".join(self.suites if suites is None else suites)
        return ["eval", self.run_dir, "--suite", chosen, *self.eval_args]

    def template_args(self) -> list[str]:
        """Arguments of train's Slurm template: TRAINER RECIPE KEY=VALUE ... name=ARM."""
        return self.train_argv()[1:2] + self.train_argv()[3:]


def plan_sweep(
    recipe: str,
    grid: dict[str, list[str]],
    *,
    fixed: dict[str, str] | None = None,
    name_template: str | None = None,
    suites: Sequence[str] = DEFAULT_SUITES,
    eval_args: Sequence[str] = (),
    resolve: Resolver | None = None,
) -> list[Arm]:
    """Expand the grid into arms and resolve each arm's recipe (validating every override).

    Args:
        recipe: a recipe name or YAML path, as `rsi-hub train --recipe` takes it.
        grid: key -> values (see `parse_grid`).
        fixed: overrides applied to every arm (`--set key=value`).
        name_template: run-name template (see `arm_name`).
        suites: suites each arm is evaluated on.
        eval_args: extra `rsi-hub eval` arguments (e.g. `--backend vllm` on GPU nodes).
        resolve: recipe resolver (default: train's loader, through `recipes.resolve_arm`).

    Raises:
        RsiHubError: an invalid override (train's message), a grid key also fixed, or two arms
            that would share a name or a run directory.
    """
    resolve = resolve or recipes.resolve_arm
    fixed = dict(fixed or {})
    clash = {recipes.recipe_key(k) for k in fixed} & {recipes.recipe_key(k) for k in grid}
    if clash:
        raise ExperimentInputError(
            f"{', '.join(sorted(clash))} is both swept (--grid) and fixed (--set).", field="grid"
        )
    base = Path(recipe).stem
    arms: list[Arm] = []
    for point in expand_grid(grid):
        name = arm_name(base, point, name_template)
        overrides = {**fixed, **point}
        resolved = resolve(recipe, {**overrides, "name": name})
        arms.append(
            Arm(
                name=name,
                recipe=recipe,
                point=point,
                overrides=overrides,
                trainer=resolved.trainer,
                num_gpus=resolved.num_gpus,
                run_dir=str(resolved.run_dir),
                suites=list(suites),
                eval_args=list(eval_args),
            )
        )
    for attr in ("name", "run_dir"):
        values = [getattr(a, attr) for a in arms]
        duplicate = next((v for v in values if values.count(v) > 1), None)
        if duplicate is not None:
            raise ExperimentInputError(
                f"two arms share the {attr.replace('_', ' ')} {duplicate!r}: change --name "
                "or the recipe's output_dir so that it contains {name}.",
                field="name",
            )
    return arms


@dataclass(frozen=True)
class SlurmOptions:
    """`#SBATCH` settings of the generated scripts."""

    time: str = "04:00:00"
    eval_time: str = "02:00:00"
    eval_gpus: int = 1
    cpus_per_gpu: int = 8
    partition: str | None = None
    account: str | None = None
    extra: tuple[str, ...] = ()
    python: str = sys.executable
    workdir: str = "."


def _command_line(python: str, argv: list[str]) -> str:
    return shlex.join([python, "-m", "rsi_hub", *argv])


def sbatch_script(
    job_name: str,
    gpus: int,
    time: str,
    commands: list[list[str]],
    log_dir: Path,
    opts: SlurmOptions,
) -> str:
    """The text of one sbatch script running `rsi-hub` commands in order (stop at a failure)."""
    lines = [
        "#!/bin/bash",
        f"#SBATCH --job-name={job_name}",
        f"#SBATCH --output={log_dir}/%x-%j.out",
        "#SBATCH --nodes=1",
        "#SBATCH --ntasks=1",
        f"#SBATCH --time={time}",
    ]
    if gpus > 0:
        lines += [
            f"#SBATCH --gres=gpu:{gpus}",
            f"#SBATCH --cpus-per-task={gpus * opts.cpus_per_gpu}",
        ]
    if opts.partition:
        lines.append(f"#SBATCH --partition={opts.partition}")
    if opts.account:
        lines.append(f"#SBATCH --account={opts.account}")
    lines += [f"#SBATCH {line}" for line in opts.extra]
    lines += [
        "# Written by `rsi-hub sweep`; see sweep.json beside it.",
        "set -euo pipefail",
        f"cd {shlex.quote(opts.workdir)}",
        *(_command_line(opts.python, argv) for argv in commands),
    ]
    return "\n".join(lines) + "\n"


def train_sbatch_script(arm: Arm, template: str, log_dir: Path, opts: SlurmOptions) -> str:
    """Train's Slurm template with this arm's job name, log, time, GPUs and arguments filled in.

    Raises:
        RsiHubError: the template lacks a line this relies on (it changed shape).
    """
    lines = template.splitlines()
    replaced: dict[str, str | None] = {
        "#SBATCH --job-name=": f"{arm.name}-train",
        "#SBATCH --output=": f"{log_dir}/%x-%j.out",
        "#SBATCH --time=": opts.time,
        **{
            f"#SBATCH {key}": value
            for key, value in recipes.slurm_resources(arm.num_gpus, opts.cpus_per_gpu).items()
        },
    }
    for prefix, value in replaced.items():
        index = next((i for i, line in enumerate(lines) if line.startswith(prefix)), None)
        if index is None:
            raise ExperimentError(
                f"train's Slurm template has no `{prefix}` line; update the sweep."
            )
        if value is None:
            del lines[index]  # a CPU arm asks for no GPU
        else:
            lines[index] = prefix + value
    last_directive = max(i for i, line in enumerate(lines) if line.startswith("#SBATCH "))
    extra = [f"#SBATCH --chdir={opts.workdir}"]
    extra += [f"#SBATCH --partition={opts.partition}"] if opts.partition else []
    extra += [f"#SBATCH --account={opts.account}"] if opts.account else []
    extra += [f"#SBATCH {line}" for line in opts.extra]
    lines[last_directive + 1 : last_directive + 1] = extra
    if "set -euo pipefail" not in lines:
        raise ExperimentError(
            "train's Slurm template has no `set -euo pipefail` line; update the sweep."
        )
    at = lines.index("set -euo pipefail") + 1
    lines[at:at] = [
        f"# rsi-hub sweep arm {arm.name}: the template's arguments, as if given to sbatch.",
        f"set -- {shlex.join(arm.template_args())}",
        f"export GPUS_PER_NODE={arm.num_gpus}",
    ]
    return "\n".join(lines) + "\n"


def write_scripts(
    arms: list[Arm], sweep_dir: Path, opts: SlurmOptions, template: str | None = None
) -> dict[str, dict[str, Path]]:
    """Write each arm's training and evaluation scripts under `sweep_dir`; return their paths.

    Every arm trains through train's Slurm template (`template`, read from the checkout when
    None); an arm of a CPU recipe (num_gpus 0) asks for no GPU there, and is evaluated on CPU.
    """
    log_dir = sweep_dir / "logs"
    log_dir.mkdir(parents=True, exist_ok=True)
    written: dict[str, dict[str, Path]] = {}
    template = template if template is not None else recipes.slurm_train_template()
    for arm in arms:
        eval_gpus = opts.eval_gpus if arm.num_gpus > 0 else 0
        scripts = {
            "train": train_sbatch_script(arm, template, log_dir, opts),
            "eval": sbatch_script(
                f"{arm.name}-eval", eval_gpus, opts.eval_time, [arm.eval_argv()], log_dir, opts
            ),
        }
        written[arm.name] = {}
        for kind, text in scripts.items():
            path = sweep_dir / f"{arm.name}.{kind}.sbatch"
            path.write_text(text)
            written[arm.name][kind] = path
    return written


def submit(
    arms: list[Arm],
    scripts: dict[str, dict[str, Path]],
    *,
    sbatch: str | None = None,
    echo: Callable[[str], None] = print,
) -> bool:
    """Submit every arm: train, then its evaluation `afterok` on it.

    (The training script itself queues `train finalize` `afterany` on its own job.) The
    evaluation is submitted with `--kill-on-invalid-dep=yes`: when its training fails, Slurm
    cancels it (reason DependencyNeverSatisfied) instead of leaving it pending for ever, and
    `rsi-hub runs --sweep` reports it as never run.

    Without `sbatch` on the PATH nothing is submitted and the commands are printed instead.
    Returns True when the jobs were submitted.
    """
    sbatch = sbatch or shutil.which("sbatch")
    for arm in arms:
        train = ["--parsable", str(scripts[arm.name]["train"])]
        if sbatch is None:
            echo(f"would submit: sbatch {shlex.join(train)}  -> TRAIN_JOB")
            echo(
                f"would submit: sbatch --parsable {KILL_ON_INVALID_DEP} "
                "--dependency=afterok:TRAIN_JOB "
                f"{scripts[arm.name]['eval']}"
            )
            continue
        arm.jobs["train"] = slurm.sbatch(train[1:], executable=sbatch)
        arm.jobs["eval"] = slurm.sbatch(
            [
                KILL_ON_INVALID_DEP,
                f"--dependency=afterok:{arm.jobs['train']}",
                str(scripts[arm.name]["eval"]),
            ],
            executable=sbatch,
        )
        echo(f"{arm.name}: train job {arm.jobs['train']}, eval job {arm.jobs['eval']} (afterok)")
    return sbatch is not None


def _default_runner(argv: list[str]) -> int:
    return subprocess.run([sys.executable, "-m", "rsi_hub", *argv], check=False).returncode


def run_local(
    arms: list[Arm],
    *,
    runner: Runner | None = None,
    echo: Callable[[str], None] = print,
    done: Callable[[Arm, str], bool] | None = None,
) -> None:
    """Train then evaluate each arm in turn, skipping steps whose results already exist.

    Args:
        runner: runs `rsi-hub` with the given arguments and returns its exit code.
        done: whether a step ("train" or a suite name) of an arm is already complete; by
            default a run with completed training evidence, or a finished `eval/<suite>/`.

    Raises:
        RsiHubError: a step failed (the arms after it are not started).
    """
    run = runner or _default_runner
    is_done = done or _step_done
    for arm in arms:
        steps: list[tuple[str, list[str]]] = []
        if is_done(arm, "train"):
            echo(f"{arm.name}: training already complete, skipped")
        else:
            steps.append(("train", arm.train_argv()))
        pending = [suite for suite in arm.suites if not is_done(arm, suite)]
        if len(pending) < len(arm.suites):
            done_now = [s for s in arm.suites if s not in pending]
            echo(f"{arm.name}: {', '.join(done_now)} already evaluated, skipped")
        if pending:
            steps.append(("eval", arm.eval_argv(pending)))
        for _step, argv in steps:
            echo(f"{arm.name}: rsi-hub {shlex.join(argv)}")
            code = run(argv)
            if code:
                raise ExperimentError(f"{arm.name}: `rsi-hub {shlex.join(argv)}` exited {code}.")


def _step_done(arm: Arm, step: str) -> bool:
    run_dir = Path(arm.run_dir)
    if step == "train":
        evidence = TrainingEvidence.read_if_any(run_dir)
        return evidence is not None and evidence.completed
    from rsi_hub.experiments import evalio

    return evalio.has_suite(run_dir, step)


def write_manifest(
    sweep_dir: Path, recipe: str, grid: dict[str, list[str]], arms: list[Arm], mode: str
) -> Path:
    """Write `sweep.json`: the recipe, grid and every arm (overrides, run dir, job ids)."""
    manifest = SweepManifest(
        recipe=recipe,
        arms=[
            SweepArm.from_json(asdict(arm), source=sweep_dir, index=i) for i, arm in enumerate(arms)
        ],
        grid=grid,
        mode=mode,
    )
    return manifest.write(sweep_dir)


def read_manifest(path: str | Path) -> SweepManifest:
    """Read a `sweep.json` (or the one inside a sweep folder).

    Raises:
        RunFileMissingError: no such file; RunDirError: malformed (names the file and field).
    """
    return SweepManifest.read(path)
