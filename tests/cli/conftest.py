"""Fixtures for the verbs that use a state directory: the CLI bound to a fresh one in
tmp_path (a real SQLite file), the example flow applied, vcjob phases set by patch, one job
run by `vcflow run`, its store, a `sleep` only the test runs."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner, Result

from vcflow.cli.app import app
from vcflow.local import statedir
from vcflow.store import SqliteStore

from .flows import jobflow, sleeping, template

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "jobflow"

Vc = Callable[..., Result]
Phase = Callable[[str, str], Result]
Rows = Callable[[str], list[dict[str, str]]]


@dataclass
class Ran:
    """A `vcflow run` of one job: its result, the manifest it ran and its pod's directory
    (`pod / "main.0.log"` its container's log)."""

    result: Result
    manifest: Path
    pod: Path


RunOne = Callable[..., Ran]


@pytest.fixture
def state_dir(tmp_path: Path) -> Path:
    return tmp_path / "state"


@pytest.fixture
def vc(state_dir: Path) -> Vc:
    """`vc("get", "jf")` runs `vcflow --state-dir <tmp> get jf`; stdout/stderr apart."""
    runner = CliRunner()

    def invoke(*args: str | Path, input: str | None = None) -> Result:
        argv = ["--state-dir", str(state_dir), *(str(a) for a in args)]
        return runner.invoke(app, argv, input=input)

    return invoke


@pytest.fixture
def example(vc: Vc) -> Result:
    """Volcano's example (templates a–e, flow `test`) applied; the controllers ran."""
    result = vc("apply", "-f", EXAMPLE)
    assert result.exit_code == 0, result.output
    return result


@pytest.fixture
def set_phase(vc: Vc) -> Phase:
    """Move a vcjob to a phase, as a person or a script would (patch of the status)."""

    def patch(job: str, phase: str) -> Result:
        body = json.dumps({"status": {"state": {"phase": phase}}})
        result = vc("patch", "vcjob", job, "--subresource", "status", "--type", "merge", "-p", body)
        assert result.exit_code == 0, result.output
        return result

    return patch


def parse_table(text: str) -> list[dict[str, str]]:
    """A kubectl-style table as rows of header → cell, cut at the header's column starts."""
    lines = [line for line in text.splitlines() if line.strip()]
    if not lines:
        return []
    header = lines[0]
    names = header.split()
    starts: list[int] = []
    for name in names:
        starts.append(header.index(name, starts[-1] + 1 if starts else 0))
    ends: list[int | None] = [*starts[1:], None]
    return [
        {n: line[s:e].strip() for n, s, e in zip(names, starts, ends, strict=True)}
        for line in lines[1:]
    ]


@pytest.fixture
def rows() -> Rows:
    return parse_table


@pytest.fixture
def run_one(vc: Vc, tmp_path: Path, state_dir: Path) -> RunOne:
    """`run_one(script, *args, name="a", before="", **job)`: `vcflow run -f M --no-live
    ARGS` of a manifest M (tmp_path/flow.yaml) of `before` (more objects), JobTemplate
    `name` running `script` (`template(name, script, **job)`) and flow `f` of it alone, or
    with `kind="Job"` the vcjob `name` alone."""

    def run(script: str = "true", *args: str, name: str = "a", before: str = "", **job: Any) -> Ran:
        manifest = tmp_path / "flow.yaml"
        alone = job.get("kind") == "Job"
        manifest.write_text(
            before + template(name, script, **job) + ("" if alone else jobflow("f", name))
        )
        result = vc("run", "-f", manifest, "--no-live", *args)
        pod = f"{name}-t-0" if alone else f"f-{name}-t-0"
        return Ran(result, manifest, state_dir / "pods" / "default" / pod)

    return run


@pytest.fixture
def store(state_dir: Path) -> Iterator[SqliteStore]:
    """The state directory's store, open for the test."""
    opened = SqliteStore.in_state_dir(statedir.resolve(state_dir))
    yield opened
    opened.close()


@pytest.fixture
def marker(request: pytest.FixtureRequest) -> Iterator[str]:
    """A `sleep` that only this test runs (to find its processes), killed afterwards."""
    with sleeping(request.node.name) as text:
        yield text
