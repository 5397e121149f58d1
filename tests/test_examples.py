"""Every manifest under examples/ validates (warnings allowed), alone and with its folder."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from vcflow.cli.app import app

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
SUFFIXES = (".yaml", ".yml", ".json")
FILES = sorted(p for p in EXAMPLES.rglob("*") if p.suffix in SUFFIXES)
FOLDERS = sorted({p.parent for p in FILES})


def test_there_are_examples() -> None:
    assert len(FILES) >= 5


@pytest.mark.parametrize("path", FILES + FOLDERS, ids=lambda p: str(p.relative_to(EXAMPLES)))
def test_example_validates(path: Path) -> None:
    result = CliRunner().invoke(app, ["validate", "-f", str(path)])
    assert result.exit_code == 0, result.output
    assert result.stdout.count(" validated\n") >= 1
    assert all(line.startswith("Warning: ") for line in result.stderr.splitlines())
