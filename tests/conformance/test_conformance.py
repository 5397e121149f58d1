"""Every conformance case file under tests/conformance/cases, and vcflow's own cases under
tests/conformance/vcflow (one per compatibility row the engine implements), one test each, through
the runner's Python API; plus the CLI over the admission cases, as CI would run it."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from vcflow.conformance import CaseError, Passed, Skipped, load_case, run_file

CASES = Path(__file__).parent / "cases"
CASE_FILES = sorted(CASES.rglob("*.yaml"))
VCFLOW_CASES = Path(__file__).parent / "vcflow"
VCFLOW_CASE_FILES = sorted(VCFLOW_CASES.rglob("*.yaml"))


def _case_id(path: Path) -> str:
    try:
        return load_case(str(path)).id
    except CaseError:
        return path.stem


@pytest.mark.parametrize("path", CASE_FILES, ids=[_case_id(p) for p in CASE_FILES])
def test_case(path: Path) -> None:
    result = run_file(str(path)).result
    if isinstance(result, Skipped):
        pytest.skip(result.reason)
    assert isinstance(result, Passed), result.reason


@pytest.mark.parametrize("path", VCFLOW_CASE_FILES, ids=[_case_id(p) for p in VCFLOW_CASE_FILES])
def test_vcflow_case(path: Path) -> None:
    """vcflow's own cases state vcflow's behaviour in `expect`: none may be skipped."""
    result = run_file(str(path)).result
    assert isinstance(result, Passed), result.reason


def test_vcflow_cases_shape() -> None:
    """Controller cases with ids `vf-ctl-NN-...`, admission cases `vf-adm-NN-...` and
    runtime cases `vf-rt-NN-...`, unique numbers in each, no Volcano flags, each tracing to
    a compatibility row (a runtime case: to docs/scheduling.md)."""
    assert len(VCFLOW_CASE_FILES) >= 10
    numbers = []
    for path in VCFLOW_CASE_FILES:
        case = load_case(str(path))
        prefix = {"controller": "ctl", "admission": "adm", "runtime": "rt"}.get(case.kind)
        assert prefix is not None, case.id
        assert re.fullmatch(rf"vf-{prefix}-\d\d-[a-z0-9-]+", case.id), case.id
        numbers.append(case.id[: len(f"vf-{prefix}-00")])
        for key in ("volcano_bug", "design_divergence", "vcflow_skip", "expect_vcflow"):
            assert key not in case.data, f"{case.id}: {key}"
        provenance = case.data.get("provenance") or []
        trace = "docs/scheduling.md" if case.kind == "runtime" else "compatibility.md row"
        assert any(trace in str(p) for p in provenance), case.id
    assert len(numbers) == len(set(numbers)), numbers


def test_cases_present() -> None:
    kinds = {p.parent.name for p in CASE_FILES}
    assert kinds == {"admission", "controller", "runtime"}
    assert (CASES / "README.md").is_file()


def test_cli_admission_cases_all_pass() -> None:
    admission = CASES / "admission"
    count = len(list(admission.rglob("*.yaml")))
    proc = subprocess.run(
        [sys.executable, "-m", "vcflow.conformance", str(admission)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    lines = proc.stdout.splitlines()
    assert lines, proc.stderr
    assert lines[-1] == f"{count} passed, 0 failed, 0 skipped", proc.stdout
    assert proc.returncode == 0, proc.stdout + proc.stderr
