"""Lint, format, types and layer contracts, run as part of the suite (CI runs only pytest).

Each tool runs from this interpreter's environment in the repository root; a failure shows
the tool's own output.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
LINT_IMPORTS = (
    "import sys; from importlinter.cli import lint_imports_command; "
    "sys.exit(lint_imports_command())"
)

TOOLS = {
    "ruff-check": ["-m", "ruff", "check", "src", "tests", "bench", "examples", "scripts"],
    "ruff-format": [
        "-m",
        "ruff",
        "format",
        "--check",
        "src",
        "tests",
        "bench",
        "examples",
        "scripts",
    ],
    "mypy-strict": ["-m", "mypy", "--cache-dir", "{tmp}/mypy-cache"],
    "import-linter": ["-c", LINT_IMPORTS, "--no-cache"],
}


@pytest.mark.parametrize("args", TOOLS.values(), ids=TOOLS.keys())
def test_tool_passes(args: list[str], tmp_path: Path) -> None:
    # mypy gets a fresh cache: a shared .mypy_cache can go stale while files are edited.
    done = subprocess.run(
        [sys.executable, *(a.format(tmp=tmp_path) for a in args)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, f"{' '.join(args)}\n{done.stdout}\n{done.stderr}"
