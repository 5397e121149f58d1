"""A finished flow exported (`get -o yaml`), deleted and applied again runs its jobs again:
the status in the export is dropped on create, as kube-apiserver drops it for a CRD with a
status subresource, so the flow does not come back `Succeed` with jobs that never ran."""

from __future__ import annotations

from pathlib import Path

import yaml
from typer.testing import Result

from .conftest import RunOne, Vc


def ok(result: Result) -> Result:
    assert result.exit_code == 0, result.output + result.stderr
    return result


def test_an_exported_flow_applied_again_runs_its_jobs(
    vc: Vc, run_one: RunOne, tmp_path: Path
) -> None:
    marks, exported = tmp_path / "marks", tmp_path / "f.yaml"
    ok(run_one(f"echo ran >> {marks}").result)
    assert marks.read_text() == "ran\n"
    exported.write_text(ok(vc("get", "jf", "f", "-o", "yaml")).stdout)
    assert yaml.safe_load(exported.read_text())["status"]["state"]["phase"] == "Succeed"
    ok(vc("delete", "jf", "f"))

    ok(vc("apply", "-f", exported))
    applied = yaml.safe_load(ok(vc("get", "jf", "f", "-o", "yaml")).stdout)
    assert (applied.get("status") or {}).get("state", {}).get("phase") != "Succeed"
    out = ok(vc("run", "-f", exported, "--no-live")).stdout
    assert "f/a Completed" in out and "flow f Succeed" in out
    assert marks.read_text() == "ran\nran\n"  # the job ran again

    ok(vc("delete", "jf", "f"))  # `run -f` of the export alone, with no apply before it
    out = ok(vc("run", "-f", exported, "--no-live")).stdout
    assert "f/a Completed" in out and "flow f Succeed" in out
    assert marks.read_text() == "ran\nran\nran\n"
