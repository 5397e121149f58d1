"""Every manifest under examples/ validates (warnings allowed), alone and with its folder,
and every example runs end to end to success."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

import vcflow
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


def _example_sets() -> list[Path]:
    """Every folder whose own manifests hold a JobFlow or a vcjob: one example each."""
    found = []
    for folder in FOLDERS:
        files = [p for p in folder.iterdir() if p.suffix in SUFFIXES]
        if any("kind: JobFlow" in p.read_text() or "kind: Job\n" in p.read_text() for p in files):
            found.append(folder)
    return found


@pytest.mark.parametrize("folder", _example_sets(), ids=lambda p: str(p.relative_to(EXAMPLES)))
def test_example_runs_to_success(folder: Path, tmp_path: Path) -> None:
    """Each example, run end to end with `vcflow.run` on a copy in a fresh state directory
    (long `sleep`s cut to 0.1 s: the flow, its jobs and their order are the example's)."""
    copy = tmp_path / "example"
    copy.mkdir()
    for path in folder.iterdir():
        if path.is_file():
            text = path.read_text(encoding="utf-8") if path.suffix in SUFFIXES else None
            if text is None:
                shutil.copy(path, copy / path.name)
            else:
                (copy / path.name).write_text(re.sub(r"sleep \d+s?", "sleep 0.1", text))
    result = vcflow.run(
        sorted(str(p) for p in copy.iterdir() if p.suffix in SUFFIXES),
        state_dir=tmp_path / "state",
        timeout=120,
        working_dir=copy,  # (as `cd <example> && vcflow run -f .`)
    )
    failed = [(j.entry, j.phase, str(j.failure or j.reason)) for j in result.all_jobs()]
    assert result.succeeded, failed
    assert result.exit_code == 0
    # (an on-failure entry of a flow that went well is Skipped: docs/flow-features.md §3)
    assert all(j.phase in ("Completed", "Skipped") for j in result.all_jobs())
