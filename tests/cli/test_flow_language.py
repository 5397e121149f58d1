"""The flow language from the command line (docs/flow-features.md part II): entries that share
a JobTemplate through `template`, run with real processes, described and refused as a template
in use."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import Result

from vcflow.api import names
from vcflow.api.vcjob import VCJob
from vcflow.store import SqliteStore

from .flows import template

Vc = Callable[..., Result]


@pytest.fixture
def manifest(tmp_path: Path) -> Path:
    return tmp_path / "flow.yaml"


def squeezed(text: str) -> list[str]:
    return [" ".join(line.split()) for line in text.splitlines()]


SHARED = """
apiVersion: flow.volcano.sh/v1alpha1
kind: JobFlow
metadata: {name: f}
spec:
  flows:
    - {name: one, template: worker}
    - {name: two, template: worker, dependsOn: {targets: [one]}}
"""


def test_two_entries_run_one_template(vc: Vc, manifest: Path, state_dir: Path) -> None:
    manifest.write_text(template("worker", "echo hello from worker") + SHARED)
    result = vc("run", "-f", manifest, "--no-live", "--timeout", "60")
    assert result.exit_code == 0, result.output
    assert "flow f Succeed" in result.stdout
    rows = [line.split()[:3] for line in result.stdout.splitlines() if line.startswith("f ")]
    assert rows == [["f", "one", "Completed"], ["f", "two", "Completed"]]
    with SqliteStore.in_state_dir(state_dir) as store:
        for job in ("f-one", "f-two"):
            labels = store.get(VCJob, "default", job).metadata.labels
            assert labels[names.LABEL_CREATED_BY_TEMPLATE] == "default.worker"
    logs = vc("logs", "f-two-t-0")
    assert logs.stdout == "hello from worker\n"
    described = squeezed(vc("describe", "jf", "f").stdout)
    assert "NAME TEMPLATE DEPENDS ON STRATEGY PATCH" in described
    assert "two worker one all no" in described
    template_described = vc("describe", "jt", "worker").stdout
    assert "f-one" in template_described and "f-two" in template_described


def test_a_template_a_running_flow_uses_is_not_deleted(
    vc: Vc, manifest: Path, state_dir: Path
) -> None:
    manifest.write_text(template("worker", "true") + SHARED)
    applied = vc("apply", "-f", manifest)
    assert applied.exit_code == 0, applied.output
    refused = vc("delete", "jt", "worker")
    assert refused.exit_code == 1
    assert refused.stderr.strip().endswith(
        'cannot delete JobTemplate "worker": unfinished JobFlow(s) f use it; stop or delete '
        "them first"
    ), refused.stderr


def test_a_missing_template_is_waited_for_under_its_name(vc: Vc, manifest: Path) -> None:
    manifest.write_text(SHARED)
    applied = vc("apply", "-f", manifest)
    assert applied.exit_code == 0, applied.output
    assert (
        'spec.flows[0].template: JobTemplate "worker" not found; the entry will wait '
        "(TemplateNotFound)" in applied.stderr
    )
    described = squeezed(vc("describe", "jf", "f").stdout)
    assert (
        'f-one Waiting TemplateNotFound jobtemplate.flow.volcano.sh "worker" not found' in described
    )
