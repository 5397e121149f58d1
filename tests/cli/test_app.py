"""The root command: version, usage errors (exit 2) and the single error boundary (exit 1)."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import Result

import vcflow
from vcflow.api import loading
from vcflow.api.errors import NotFound

Invoke = Callable[..., Result]
REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples"


def boom(*args: object, **kwargs: object) -> None:
    raise RuntimeError("disk on\nfire")


def test_version(vcflow_cli: Invoke) -> None:
    result = vcflow_cli("version")
    assert result.exit_code == 0
    assert result.stdout == f"vcflow {vcflow.__version__}\n"


@pytest.mark.parametrize(
    "args",
    [
        pytest.param(["validate"], id="validate-without-f"),
        pytest.param(["validate", "-f"], id="f-without-path"),
        pytest.param(["validate", "--bogus", "x"], id="unknown-option"),
        pytest.param(["frobnicate"], id="unknown-command"),
        pytest.param([], id="no-arguments"),
    ],
)
def test_usage_errors_exit_2(vcflow_cli: Invoke, args: list[str]) -> None:
    result = vcflow_cli(*args)
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output


def test_missing_filename_names_the_option(vcflow_cli: Invoke) -> None:
    result = vcflow_cli("validate")
    assert "Missing option '-f' / '--filename'" in result.stderr


def test_internal_error_is_one_line(vcflow_cli: Invoke, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(loading, "read_file_lenient", boom)
    result = vcflow_cli("validate", "-f", EXAMPLES / "jobflow")
    assert result.exit_code == 1
    assert result.stderr == (
        "internal error: RuntimeError: disk on fire, rerun with -v for details\n"
    )
    assert result.stdout == ""


def test_verbose_shows_the_traceback(vcflow_cli: Invoke, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(loading, "read_file_lenient", boom)
    result = vcflow_cli("-v", "validate", "-f", EXAMPLES / "jobflow")
    assert result.exit_code == 1
    assert result.stderr.startswith("Traceback (most recent call last):")
    assert result.stderr.splitlines()[-1] == "internal error: RuntimeError: disk on fire"


def test_vcflow_error_is_its_message(vcflow_cli: Invoke, monkeypatch: pytest.MonkeyPatch) -> None:
    def not_found(*args: object, **kwargs: object) -> None:
        raise NotFound('jobflow "x" not found')

    monkeypatch.setattr(loading, "read_file_lenient", not_found)
    result = vcflow_cli("validate", "-f", EXAMPLES / "jobflow")
    assert result.exit_code == 1
    assert result.stderr == 'jobflow "x" not found\n'


def test_python_dash_m_runs_the_same_cli() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "vcflow", "validate", "-f", "examples/jobflow/diamond"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "jobflow.flow.volcano.sh/diamond validated" in done.stdout
    usage = subprocess.run(
        [sys.executable, "-m", "vcflow", "validate"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert usage.returncode == 2
    assert "Traceback" not in usage.stderr
