"""A non-editable install carries its package data: the wheel built from the source holds
Volcano's Job CRD (and its NOTICE), and vcflow installed from it finds the schema.

Builds the wheel with pip from a copy of the source (so no `build/` lands in the tree); the
build backend comes from pip's usual indexes, as for `pip install -e .`."""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DATA = (
    "vcflow/admission/crds/batch.volcano.sh_jobs.yaml",
    "vcflow/admission/crds/NOTICE.md",
    "vcflow/dashboard/static/index.html",  # (the dashboard's page: docs/dashboard.md)
)
CHECK = (
    "import vcflow, sys; from vcflow.admission import crd; "
    "spec = crd.job_spec_schema().properties['tasks'].items.properties['template']; "
    "print(vcflow.__file__); print(sorted(spec.properties))"
)


def test_the_wheel_ships_the_crd_and_an_install_finds_it(tmp_path: Path) -> None:
    source = tmp_path / "source"
    source.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(REPO / name, source / name)
    shutil.copytree(REPO / "src", source / "src", ignore=shutil.ignore_patterns("*.egg-info"))
    built = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(tmp_path), str(source)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert built.returncode == 0, built.stdout + built.stderr
    (wheel,) = tmp_path.glob("vcflow-*.whl")
    installed = tmp_path / "site"
    with zipfile.ZipFile(wheel) as archive:
        assert set(DATA) <= set(archive.namelist())
        archive.extractall(installed)
    ran = subprocess.run(
        [sys.executable, "-c", CHECK],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        cwd=tmp_path,
        env={"PYTHONPATH": str(installed), "PATH": "/usr/bin:/bin"},
    )
    assert ran.returncode == 0, ran.stderr
    where, fields = ran.stdout.splitlines()
    assert where.startswith(str(installed))
    assert fields == "['metadata', 'spec']"


def test_the_license_file_is_the_license_pyproject_names() -> None:
    """pyproject.toml says Apache-2.0; LICENSE is that license's whole text."""
    import tomllib

    declared = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["license"]
    assert declared == {"text": "Apache-2.0"}
    text = (REPO / "LICENSE").read_text()
    assert text.split()[:4] == ["Apache", "License", "Version", "2.0,"]
    assert "END OF TERMS AND CONDITIONS" in text
    assert "APPENDIX: How to apply the Apache License to your work." in text
