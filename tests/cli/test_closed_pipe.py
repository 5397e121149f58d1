"""A reader that closes the pipe early (`vcflow get jt | head -1`): the output ends quietly
(nothing on stderr, exit 141 as a shell reports kubectl there), never an internal error.
Real processes with a real pipe, many runs: the close races the writes."""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import EXAMPLE, Vc
from .flows import template

DEADLINE = 60.0
MANY = 500  # with LONG names: a table larger than a pipe's buffer and ours together
LONG = "x" * 200


@pytest.fixture(scope="module")
def many(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A state directory holding MANY JobTemplates (applied once for the module)."""
    from typer.testing import CliRunner

    from vcflow.cli.app import app

    root = tmp_path_factory.mktemp("many")
    manifest = root / "many.yaml"
    labels = ', labels: {{team: blue, num: "{}"}}'
    manifest.write_text(
        "".join(
            template(f"t{n:04d}-{LONG}", f"echo {n}", container="c", meta=labels.format(n))
            for n in range(MANY)
        )
    )
    state_dir = root / "state"
    applied = CliRunner().invoke(app, ["--state-dir", str(state_dir), "apply", "-f", str(manifest)])
    assert applied.exit_code == 0, applied.output
    return state_dir


def _closed_early(state_dir: Path, *args: str, read: int = 1) -> tuple[int, str, str]:
    """Run `vcflow --state-dir S ARGS`, read `read` lines of its stdout, close the pipe; its
    (exit code, the lines read, stderr)."""
    proc = subprocess.Popen(
        [*_vcflow(state_dir), *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        assert proc.stdout is not None and proc.stderr is not None
        head = b"".join(proc.stdout.readline() for _ in range(read))
        proc.stdout.close()
        err = proc.stderr.read()
        proc.wait(timeout=DEADLINE)
        return proc.returncode, head.decode(), err.decode()
    finally:
        _ended(proc)


def _vcflow(state_dir: Path) -> list[str]:
    return [sys.executable, "-m", "vcflow", "--state-dir", str(state_dir)]


def _ended(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        proc.kill()
        proc.wait()
    for pipe in (proc.stdout, proc.stderr):
        if pipe is not None:
            pipe.close()


@pytest.mark.parametrize("run", range(4))
def test_a_table_larger_than_the_pipe_read_by_head(many: Path, run: int) -> None:
    """The reader takes one line and goes while rows are still to be written."""
    code, head, err = _closed_early(many, "get", "jt")
    assert head.split() == ["NAME", "AGE"]
    assert (code, err) == (141, "")


@pytest.mark.parametrize(
    "args",
    [("get", "jt"), ("get", "jt", "-o", "yaml"), ("get", "jt", "-o", "name"), ("describe", "jt")],
    ids=["table", "yaml", "name", "describe"],
)
def test_a_reader_gone_before_the_first_write(many: Path, args: tuple[str, ...]) -> None:
    read, write = os.pipe()
    os.close(read)
    try:
        proc = subprocess.Popen(
            [sys.executable, "-m", "vcflow", "--state-dir", str(many), *args],
            stdout=write,
            stderr=subprocess.PIPE,
        )
    finally:
        os.close(write)
    try:
        _, err = proc.communicate(timeout=DEADLINE)
    finally:
        _ended(proc)
    assert (proc.returncode, err) == (141, b"")


@pytest.mark.parametrize("fmt", ["yaml", "json"])
@pytest.mark.parametrize("run", range(2))
def test_a_document_read_by_head_ends_quietly(many: Path, fmt: str, run: int) -> None:
    """One large write: what did not fit is dropped (exit 0) or the next write fails (141)."""
    code, head, err = _closed_early(many, "get", "jt", "-o", fmt, read=2)
    assert head
    assert (code, err) in ((0, ""), (141, ""))


@pytest.mark.parametrize("run", range(8))
def test_head_in_a_shell_pipeline(vc: Vc, state_dir: Path, run: int) -> None:
    """The report's case, `vcflow get jt | head -1` in a shell: a small table races head's
    exit; stderr is empty every time."""
    assert vc("apply", "-f", EXAMPLE).exit_code == 0
    command = f"{shlex.join(_vcflow(state_dir))} get jt | head -1"
    done = subprocess.run(["sh", "-c", command], capture_output=True, text=True, timeout=DEADLINE)
    assert done.stdout.split() == ["NAME", "AGE"]
    assert done.stderr == ""


def test_a_broken_pipe_that_is_not_our_output_is_an_error(
    vc: Vc, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A BrokenPipeError of another pipe or socket (a server's) is not hidden."""
    from vcflow.cli import kinds

    def broken(*args: object, **kwargs: object) -> None:
        raise BrokenPipeError(32, "Broken pipe")

    monkeypatch.setattr(kinds, "resolve", broken)
    result = vc("get", "jt")
    assert result.exit_code == 1
    assert result.stderr.startswith("internal error: BrokenPipeError")
