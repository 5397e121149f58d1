"""Fixtures for the verbs that use a state directory: the CLI bound to a fresh one in
tmp_path (a real SQLite file), the example flow applied, vcjob phases set by patch."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import CliRunner, Result

from vcflow.cli.app import app

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "jobflow"

Vc = Callable[..., Result]
Phase = Callable[[str, str], Result]
Rows = Callable[[str], list[dict[str, str]]]


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
