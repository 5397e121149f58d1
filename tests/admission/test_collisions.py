"""Generated names that collide (`vcflow.admission.collisions`): within one flow an error at
admission (pods of two entries), between the objects of one input a warning (vcjobs of two
flows, pods of a flow and a vcjob), as `validate`, `apply` and `run` read them."""

from __future__ import annotations

from pathlib import Path

from vcflow.admission.review import Context, errors_only, review
from vcflow.api.jobflow import JobFlow
from vcflow.api.jobtemplate import JobTemplate
from vcflow.local import manifests


def template_yaml(name: str, task: str, replicas: int = 1) -> str:
    return f"""apiVersion: flow.volcano.sh/v1alpha1
kind: JobTemplate
metadata: {{name: {name}}}
spec:
  tasks:
    - name: {task}
      replicas: {replicas}
      template: {{spec: {{restartPolicy: Never, containers: [{{name: c, command: ["true"]}}]}}}}
---
"""


def flow_yaml(name: str, *entries: str) -> str:
    listed = ", ".join(f"{{name: {e}}}" for e in entries)
    return f"""apiVersion: flow.volcano.sh/v1alpha1
kind: JobFlow
metadata: {{name: {name}}}
spec:
  flows: [{listed}]
---
"""


def load(tmp_path: Path, text: str) -> manifests.Manifests:
    path = tmp_path / "m.yaml"
    path.write_text(text)
    return manifests.load([str(path)])


def test_pods_of_two_entries_of_one_flow_with_one_name_are_an_error(tmp_path: Path) -> None:
    # the example: both make pod f-x-a-b-0; every run then failed
    loaded = load(
        tmp_path, template_yaml("x", "a-b") + template_yaml("x-a", "b") + flow_yaml("f", "x", "x-a")
    )
    (error,) = loaded.errors
    assert str(error) == (
        f"{tmp_path / 'm.yaml'}:23 (document 3): JobFlow default/f: spec.flows[1].name: "
        'generated pod name "f-x-a-b-0" of task "b" is also that of task "a-b" of entry "x" '
        "(spec.flows[0]): the two jobs would take each other's pods; rename a task or an entry"
    )


def test_a_task_without_replicas_makes_no_pod_to_collide() -> None:
    templates = {
        "x": JobTemplate.from_dict(_template("x", "a-b", 0)),
        "x-a": JobTemplate.from_dict(_template("x-a", "b", 1)),
    }
    flow = JobFlow.from_dict(_flow("f", "x", "x-a"))
    assert errors_only(review(flow, context=Context(templates=templates))) == []


def test_vcjobs_of_two_flows_with_one_name_are_a_warning(tmp_path: Path) -> None:
    # flows a-b (entry c) and a (entry b-c) both make vcjob a-b-c: one waits for ever
    text = template_yaml("c", "t") + template_yaml("b-c", "t")
    loaded = load(tmp_path, text + flow_yaml("a-b", "c") + flow_yaml("a", "b-c"))
    assert loaded.errors == ()
    (warning,) = loaded.warnings
    assert warning.path == "spec.flows[0].name" and warning.name == "a"
    assert warning.message == (
        'vcjob "a-b-c", made by entry "b-c" of JobFlow default/a, is also made by entry "c" '
        "of JobFlow default/a-b: one of them waits for ever (NameConflict)"
    )


def test_pods_of_a_flow_and_of_a_vcjob_with_one_name_are_a_warning(tmp_path: Path) -> None:
    vcjob = """apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: f-x-a}
spec:
  minAvailable: 1
  tasks:
    - name: b
      replicas: 1
      template: {spec: {restartPolicy: Never, containers: [{name: c, command: ["true"]}]}}
"""
    loaded = load(tmp_path, template_yaml("x", "a-b") + flow_yaml("f", "x") + vcjob)
    messages = [w.message for w in loaded.warnings]
    assert messages == [
        'pod "f-x-a-b-0", made by Job default/f-x-a, is also made by entry "x" of JobFlow '
        "default/f: their jobs would take each other's pods"
    ]


def test_other_namespaces_do_not_collide(tmp_path: Path) -> None:
    text = template_yaml("c", "t") + template_yaml("b-c", "t") + flow_yaml("a-b", "c")
    other = flow_yaml("a", "b-c").replace("{name: a}", "{name: a, namespace: other}")
    assert not [w for w in load(tmp_path, text + other).warnings if "also made" in w.message]


def _template(name: str, task: str, replicas: int) -> dict[str, object]:
    pod = {"spec": {"restartPolicy": "Never", "containers": [{"name": "c", "command": ["true"]}]}}
    return {
        "apiVersion": "flow.volcano.sh/v1alpha1",
        "kind": "JobTemplate",
        "metadata": {"name": name},
        "spec": {"tasks": [{"name": task, "replicas": replicas, "template": pod}]},
    }


def _flow(name: str, *entries: str) -> dict[str, object]:
    return {
        "apiVersion": "flow.volcano.sh/v1alpha1",
        "kind": "JobFlow",
        "metadata": {"name": name},
        "spec": {"flows": [{"name": e} for e in entries]},
    }
