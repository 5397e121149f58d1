"""`vcflow validate` warns of a flow a stage of which can never fit (docs/scheduling.md, the
same check as `admission: Hold`): against `--capacity`, and against Queues given alongside
(`fit_warnings`, while the manifests do not load Queues themselves)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from typer.testing import Result

from vcflow.api.errors import Origin
from vcflow.api.jobflow import JobFlow
from vcflow.api.jobtemplate import JobTemplate
from vcflow.api.loading import Document
from vcflow.api.scheduling import Queue
from vcflow.cli.validate import fit_warnings
from vcflow.local.manifests import Item
from vcflow.reconcile.vcjob.resources import UNLIMITED

Invoke = Callable[..., Result]
Write = Callable[..., Path]


def template_text(name: str, cpu: str) -> str:
    return (
        "apiVersion: flow.volcano.sh/v1alpha1\nkind: JobTemplate\n"
        f"metadata: {{name: {name}}}\nspec:\n  tasks:\n"
        "    - {name: t, replicas: 1, template: {spec: {restartPolicy: Never, containers: "
        f"[{{name: c, image: busybox, resources: {{requests: {{cpu: '{cpu}'}}}}}}]}}}}}}\n"
    )


FLOW = """apiVersion: flow.volcano.sh/v1alpha1
kind: JobFlow
metadata: {name: e3}
spec:
  queue: team-a
  flows:
  - name: p1
  - name: p2
    dependsOn: {targets: [p1]}
"""


def test_capacity_warns_of_a_stage_that_never_fits(
    vcflow_cli: Invoke, write_manifest: Write
) -> None:
    path = write_manifest("---\n".join([template_text("p1", "1"), template_text("p2", "4"), FLOW]))
    result = vcflow_cli("validate", "-f", path, "--capacity", "cpu=2")
    assert result.exit_code == 0, result.output
    assert result.stderr.splitlines() == [
        f"Warning: {path}:22 (document 3): JobFlow default/e3: spec.flows[1]: entry p2 needs "
        "cpu 4; this machine has cpu 2: the flow can never finish"
    ]
    assert vcflow_cli("validate", "-f", path, "--capacity", "cpu=4").stderr == ""
    assert vcflow_cli("validate", "-f", path).stderr == ""


def test_a_bad_capacity_is_a_one_line_usage_error(
    vcflow_cli: Invoke, write_manifest: Write
) -> None:
    path = write_manifest(FLOW)
    result = vcflow_cli("validate", "-f", path, "--capacity", "cpu=two")
    assert result.exit_code == 2
    assert "Invalid value for '--capacity'" in result.stderr and "Traceback" not in result.stderr


def item(data: dict[str, Any], model: Any) -> Item:
    return Item(model.from_dict(data), Document(data, Origin("q.yaml", 0)))


def test_queues_given_alongside_are_checked() -> None:
    def tmpl(name: str, cpu: str) -> dict[str, Any]:
        container = {"name": "c", "image": "x", "resources": {"requests": {"cpu": cpu}}}
        task = {"name": "t", "replicas": 1, "template": {"spec": {"containers": [container]}}}
        return {"metadata": {"name": name, "namespace": "default"}, "spec": {"tasks": [task]}}

    flow = {
        "metadata": {"name": "e3", "namespace": "default"},
        "spec": {"queue": "team-a", "flows": [{"name": "p1"}, {"name": "p2"}]},
    }
    queue = {"metadata": {"name": "team-a"}, "spec": {"capability": {"cpu": "2"}}}
    items = [
        item(tmpl("p1", "1"), JobTemplate),
        item(tmpl("p2", "4"), JobTemplate),
        item(flow, JobFlow),
    ]
    assert fit_warnings(items, UNLIMITED) == []
    found = fit_warnings([*items, item(queue, Queue)], UNLIMITED)
    assert [(w.path, w.message, w.warning) for w in found] == [
        (
            "spec.flows[1]",
            "entry p2 needs cpu 4; queue team-a capability cpu 2: the flow can never finish",
            True,
        )
    ]
