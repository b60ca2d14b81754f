"""A release never leaves its run: symlinks out, dangerous --out, bad ids, stale hashes, no Hub.

Each test here guards a bug that was there before: a run's symlinks to files outside it were
staged with their targets' contents; `--out PARENT --force` deleted the run and its siblings;
`--repo-id ../../x` and `--name ../x` were accepted; the digest cache let an edit that restored
the mtime through to the push; an unreachable Hub gave a traceback.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from rsi_hub.cli import main
from rsi_hub.errors import ReleaseError
from rsi_hub.release import load_facts, push_release, release_problems, stage_release
from rsi_hub.release.manifest import MANIFEST_FILE
from tests.test_release_push import TOKEN, FakeHub

REPO_ID = "RSIArena/RSIAgent-Delta-tiny"


def quiet(_: str) -> None:
    pass


@pytest.fixture
def run(tiny_run: Path, tmp_path: Path) -> Path:
    """A writable copy of the tiny run in `work/runs/run`, beside a sibling run `other`."""
    runs = tmp_path / "work" / "runs"
    (runs / "other").mkdir(parents=True)
    (runs / "other" / "keep.txt").write_text("sibling")
    return Path(shutil.copytree(tiny_run, runs / "run"))


def _stage(run: Path, out: Path, **kwargs: object):
    return stage_release(run, name="tiny", out=out, log=quiet, **kwargs)


@pytest.mark.parametrize("link_name", ["model-extra.safetensors", "tokenizer.model"])
def test_a_symlink_leaving_the_run_is_refused(run: Path, tmp_path: Path, link_name: str) -> None:
    secret = tmp_path / "secret"
    secret.write_text("password\n")
    (run / link_name).symlink_to(secret)
    out = tmp_path / "staged"
    with pytest.raises(ReleaseError) as err:
        _stage(run, out)
    assert str(err.value) == (
        f"{run / link_name}: a symlink to {secret}, outside the run {run}; a release ships only "
        "the run's own files: replace the link with a copy of the file if it belongs to the "
        "model, or remove it."
    )
    assert not out.exists() and not (tmp_path / ".staged.staging").exists()


def test_a_symlink_inside_the_run_is_staged_as_a_real_file(run: Path, tmp_path: Path) -> None:
    (run / "extra").mkdir()
    (run / "extra" / "sp.model").write_bytes(b"sentencepiece")
    (run / "tokenizer.model").symlink_to(Path("extra") / "sp.model")
    staged = _stage(run, tmp_path / "staged").folder / "tokenizer.model"
    assert not staged.is_symlink()
    assert staged.read_bytes() == b"sentencepiece"


def test_validation_reports_a_symlink_planted_in_the_staged_release(
    run: Path, tmp_path: Path
) -> None:
    staged = _stage(run, tmp_path / "staged")
    secret = tmp_path / "secret"
    secret.write_text("password\n")
    (staged.folder / "model-extra.safetensors").symlink_to(secret)
    assert release_problems(staged.folder, staged.facts, load_model=False) == [
        f"{staged.folder / 'model-extra.safetensors'}: a symlink (to {secret}); a release holds "
        "real files only, and a push would send whatever the link points to; stage the release "
        "again with `rsi-hub release RUN`."
    ]


@pytest.mark.parametrize("where", ["run", "inside", "parent", "grandparent"])
def test_out_that_is_holds_or_lies_in_the_run_is_refused_even_with_force(
    run: Path, where: str, capsys
) -> None:
    out = {
        "run": run,
        "inside": run / "sub",
        "parent": run.parent,
        "grandparent": run.parent.parent,
    }[where]
    argv = ["release", str(run), "--name", "tiny", "--out", str(out), "--force"]
    assert main(argv) == 2
    err = capsys.readouterr().err
    if where in ("run", "inside"):
        assert err == (
            f"rsi-hub release: error: {out}: inside the run directory {run}; choose an --out "
            "outside it.\n"
        )
    else:
        assert err == (
            f"rsi-hub release: error: {out}: holds the run directory {run}, so replacing it "
            "would delete the run; choose an --out beside the run (or leave it out: the default "
            "is release-NAME beside it).\n"
        )
    assert (run / "model.safetensors").is_file()
    assert (run.parent / "other" / "keep.txt").read_text() == "sibling"


def test_force_deletes_only_what_a_previous_staging_left(run: Path, tmp_path: Path) -> None:
    out = tmp_path / "staged"
    _stage(run, out)
    _stage(run, out)  # a previous staging alone is replaced without --force
    (out / "notes.txt").write_text("mine")
    with pytest.raises(ReleaseError) as err:
        _stage(run, out)
    assert str(err.value) == (
        f"{out}: a staged release that also holds 1 file(s) staging did not write (notes.txt); "
        "move them out, or pass --force to delete them with it."
    )
    assert _stage(run, out, force=True).folder == out
    assert not (out / "notes.txt").exists()


def test_a_malformed_marker_is_no_staged_release(run: Path, tmp_path: Path) -> None:
    out = tmp_path / "mine"
    out.mkdir()
    (out / MANIFEST_FILE).write_text("{}")
    (out / "thesis.tex").write_text("years of work")
    with pytest.raises(ReleaseError, match=f"its {MANIFEST_FILE} is malformed"):
        _stage(run, out, force=True)
    assert (out / "thesis.tex").read_text() == "years of work"


@pytest.mark.parametrize(
    ("option", "value", "message"),
    [
        (
            "--repo-id",
            "../../x",
            "--repo-id '../../x': not a Hub repository id (Repo id must be in the form "
            "'repo_name' or 'namespace/repo_name': '../../x'. Use `repo_type` argument if "
            "needed.); give ORG/NAME of letters, digits, '-', '_' and '.'.",
        ),
        (
            "--name",
            "../tiny",
            "--name '../tiny': not a plain folder name under release/ (no '/', '\\', '..' or "
            "leading '.'); pass the name of a facts folder, e.g. --name tiny.",
        ),
        (
            "--name",
            "..",
            "--name '..': not a plain folder name under release/ (no '/', '\\', '..' or "
            "leading '.'); pass the name of a facts folder, e.g. --name tiny.",
        ),
    ],
)
def test_bad_repo_id_or_name_is_refused_before_anything_is_written(
    run: Path, tmp_path: Path, capsys, option: str, value: str, message: str
) -> None:
    argv = ["release", str(run), "--out", str(tmp_path / "staged"), option, value]
    if option != "--name":
        argv += ["--name", "tiny"]
    assert main(argv) == 2
    assert capsys.readouterr().err == f"rsi-hub release: error: {message}\n"
    assert not (tmp_path / "staged").exists()


def test_the_default_name_of_dot_is_the_folder_it_stands_for(tmp_path: Path, monkeypatch) -> None:
    tiny = tmp_path / "tiny"
    tiny.mkdir()
    monkeypatch.chdir(tiny)
    # No run there, but the facts folder release/tiny/ was found from the name `.` stands for.
    with pytest.raises(ReleaseError, match=r"missing config\.json, tokenizer\.json"):
        stage_release(".", log=quiet)
    assert load_facts("tiny").name == "tiny"


def test_push_rehashes_every_byte_an_edit_that_restores_the_mtime_is_caught(
    run: Path, tmp_path: Path, monkeypatch
) -> None:
    monkeypatch.setenv("HF_TOKEN", TOKEN)
    staged = _stage(run, tmp_path / "staged")
    readme = staged.folder / "README.md"
    before = readme.stat()
    text = readme.read_bytes()
    readme.write_bytes(text.replace(b"RSIAgent", b"RSIAgenT", 1))  # same size
    os.utime(readme, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert readme.stat().st_mtime_ns == before.st_mtime_ns
    hub = FakeHub()
    with pytest.raises(ReleaseError) as err:
        push_release(staged.folder, api=hub, log=quiet)
    old_sha, new_sha = (hashlib.sha256(data).hexdigest() for data in (text, readme.read_bytes()))
    assert str(err.value) == (
        f"{staged.folder} no longer matches its {MANIFEST_FILE} (nothing was pushed):\n"
        f"  - {readme}: sha256 {new_sha[:12]}… but {MANIFEST_FILE} says {old_sha[:12]}… "
        "(changed or corrupted after staging); stage the release again with "
        "`rsi-hub release RUN`."
    )
    assert hub.calls == []


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _unreachable_hub_env(port: int) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "HF_HUB_OFFLINE"}
    return {**env, "HF_ENDPOINT": f"http://127.0.0.1:{port}", "HF_TOKEN": TOKEN}


def test_an_unreachable_hub_is_one_line_saying_nothing_was_pushed(
    run: Path, tmp_path: Path
) -> None:
    port = _closed_port()
    out = tmp_path / "staged"
    command = [sys.executable, "-m", "rsi_hub", "release", str(run), "--name", "tiny"]
    command += ["--out", str(out), "--push"]
    done = subprocess.run(
        command, env=_unreachable_hub_env(port), capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    assert done.stderr.splitlines()[-1] == (
        f"rsi-hub release: error: pushing {out} to {REPO_ID} failed: cannot reach the Hub at "
        f"http://127.0.0.1:{port} (ConnectError: [Errno 111] Connection refused); nothing was "
        "pushed; run the same command again when the Hub is reachable: it sends only files "
        "missing or different there, then checks every file."
    )
    assert TOKEN not in done.stdout + done.stderr


def test_an_unreachable_hub_stops_space_deploy_with_one_line(tmp_path: Path) -> None:
    port = _closed_port()
    command = [sys.executable, "-m", "rsi_hub", "space", "deploy", "--space-id", "me/chat"]
    done = subprocess.run(
        command, env=_unreachable_hub_env(port), capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 2, done.stderr
    assert done.stderr == (
        "rsi-hub space: error: deploying the Space me/chat failed: cannot reach the Hub at "
        f"http://127.0.0.1:{port} (ConnectError: [Errno 111] Connection refused); nothing was "
        "deployed; run the command again.\n"
    )
