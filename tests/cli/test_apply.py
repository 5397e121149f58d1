"""`vcflow apply`: kubectl's outcome lines, all-or-nothing writes, warnings located in files,
and the in-process controllers running after the write."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import Result

from vcflow.api.jobflow import JobFlow
from vcflow.api.vcjob import VCJob
from vcflow.store import SqliteStore

Vc = Callable[..., Result]
Rows = Callable[[str], list[dict[str, str]]]
Write = Callable[..., Path]
EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "jobflow"

TEMPLATE = """apiVersion: flow.volcano.sh/v1alpha1
kind: JobTemplate
metadata: {{name: {name}}}
spec:
  minAvailable: {min}
  tasks:
    - {{name: t, replicas: 2, template: {{spec: {{restartPolicy: Never,
        containers: [{{name: c, image: busybox}}]}}}}}}
"""
FLOW = """apiVersion: flow.volcano.sh/v1alpha1
kind: JobFlow
metadata: {name: solo}
spec:
  flows:
    - name: x
"""


def stored(state_dir: Path) -> tuple[list[str], list[str]]:
    """Names of the flows and vcjobs in the state directory's store."""
    store = SqliteStore.in_state_dir(state_dir)
    try:
        return [f.name for f in store.list(JobFlow)], [j.name for j in store.list(VCJob)]
    finally:
        store.close()


def test_apply_prints_kubectl_lines_and_runs_the_controllers(
    example: Result, vc: Vc, rows: Rows
) -> None:
    assert example.stdout.splitlines() == [
        "jobflow.flow.volcano.sh/test created",
        *(f"jobtemplate.flow.volcano.sh/{t} created" for t in "abcde"),
    ]
    assert example.stderr == ""
    flows = rows(vc("get", "jf").stdout)
    assert [(r["NAME"], r["STATUS"]) for r in flows] == [("test", "Pending")]
    assert [r["NAME"] for r in rows(vc("get", "vcjob").stdout)] == ["test-a"]


def test_apply_twice_is_unchanged(example: Result, vc: Vc) -> None:
    again = vc("apply", "-f", EXAMPLE)
    assert again.exit_code == 0
    assert {line.rsplit(" ", 1)[1] for line in again.stdout.splitlines()} == {"unchanged"}


def test_changed_template_is_configured(vc: Vc, write_manifest: Write) -> None:
    path = write_manifest(TEMPLATE.format(name="x", min=1))
    assert vc("apply", "-f", path).stdout == "jobtemplate.flow.volcano.sh/x created\n"
    path.write_text(TEMPLATE.format(name="x", min=2), encoding="utf-8")
    assert vc("apply", "-f", path).stdout == "jobtemplate.flow.volcano.sh/x configured\n"
    assert "minAvailable: 2" in vc("get", "jt", "x", "-o", "yaml").stdout


def test_one_bad_object_writes_nothing(vc: Vc, write_manifest: Write, state_dir: Path) -> None:
    bad = FLOW.replace("- name: x", "- name: x\n    - name: y\n      dependsOn: {targets: [z]}")
    path = write_manifest(TEMPLATE.format(name="x", min=1) + "---\n" + bad)
    result = vc("apply", "-f", path)
    assert result.exit_code == 1
    assert result.stdout == ""
    lines = result.stderr.splitlines()  # (y's template is missing: warned of, as validate)
    assert len(lines) == 2 and "Traceback" not in result.stderr
    assert lines[0].startswith(f"Warning: {path}:") and 'JobTemplate "y" not found' in lines[0]
    assert lines[1].startswith(f"{path}:") and "JobFlow default/solo" in lines[1]
    assert "No resources found" in vc("get", "jt").stderr


def test_store_refusal_names_file_and_line(example: Result, vc: Vc, write_manifest: Write) -> None:
    changed = (EXAMPLE / "JobFlow.yaml").read_text(encoding="utf-8").replace("['c','d']", "['c']")
    path = write_manifest(changed, name="flow.yaml")
    result = vc("apply", "-f", path)
    assert result.exit_code == 1
    assert result.stderr.splitlines() == [
        f"{path}:6: JobFlow default/test: spec: jobflow spec updates are not supported (a "
        "flow runs its spec once: delete the flow first, or run it again as a new flow with "
        "vcflow resubmit jobflow test [-p NAME=VALUE])"
    ]


def test_store_refusal_prints_the_warnings_first(vc: Vc, write_manifest: Write) -> None:
    """A refused write's review warned too: its warnings come before the error, as kubectl
    prints a refused write's `Warning` headers before the error."""
    path = write_manifest(FLOW, name="f.yaml")
    assert vc("apply", "-f", path).exit_code == 0
    path.write_text(FLOW + "    - name: y\n", encoding="utf-8")
    result = vc("apply", "-f", path)
    assert result.exit_code == 1
    missing = "not found; the entry will wait (TemplateNotFound) until it is created"
    assert result.stderr.splitlines() == [
        f'Warning: {path}:6: JobFlow default/solo: spec.flows[0].name: JobTemplate "x" {missing}',
        f'Warning: {path}:7: JobFlow default/solo: spec.flows[1].name: JobTemplate "y" {missing}',
        f"{path}:4: JobFlow default/solo: spec: jobflow spec updates are not supported (a "
        "flow runs its spec once: delete the flow first, or run it again as a new flow with "
        "vcflow resubmit jobflow solo [-p NAME=VALUE])",
    ]


def test_a_flow_refused_before_the_store_prints_validates_warnings_first(
    vc: Vc, write_manifest: Write
) -> None:
    """A cyclic flow is refused by apply's own review, before anything reaches the store:
    the warnings `validate` prints come first all the same, less TemplateNotFound of a
    template the store holds."""
    cyclic = FLOW.replace(
        "- name: x",
        "- name: x\n      dependsOn: {targets: [y]}\n    - name: y\n"
        "      dependsOn: {targets: [x]}",
    )
    path = write_manifest(cyclic, name="cyc.yaml")
    missing = "not found; the entry will wait (TemplateNotFound) until it is created"
    cycle = f"{path}:7: JobFlow default/solo: spec.flows[0].dependsOn.targets: jobflow Flow "
    cycle += "is not DAG: cycle x → y → x"
    said = [
        f'Warning: {path}:6: JobFlow default/solo: spec.flows[0].name: JobTemplate "x" {missing}',
        f'Warning: {path}:8: JobFlow default/solo: spec.flows[1].name: JobTemplate "y" {missing}',
        cycle,
    ]
    assert vc("validate", "-f", path).stderr.splitlines() == said
    result = vc("apply", "-f", path)
    assert (result.exit_code, result.stdout) == (1, "")
    assert result.stderr.splitlines() == said
    vc("apply", "-f", write_manifest(TEMPLATE.format(name="x", min=1), name="t.yaml"))
    assert vc("apply", "-f", path).stderr.splitlines() == [said[1], cycle]


def test_flow_alone_resolves_templates_in_the_store(
    vc: Vc, write_manifest: Write, state_dir: Path
) -> None:
    vc("apply", "-f", write_manifest(TEMPLATE.format(name="x", min=1), name="t.yaml"))
    result = vc("apply", "-f", write_manifest(FLOW, name="f.yaml"))
    assert result.exit_code == 0
    assert result.stderr == ""
    assert stored(state_dir) == (["solo"], ["solo-x"])


def test_missing_template_is_a_warning_with_its_line(vc: Vc, write_manifest: Write) -> None:
    path = write_manifest(FLOW, name="f.yaml")
    result = vc("apply", "-f", path)
    assert result.exit_code == 0
    assert result.stdout == "jobflow.flow.volcano.sh/solo created\n"
    assert result.stderr.startswith(f"Warning: {path}:6: JobFlow default/solo: spec.flows[0]")


def test_each_warning_names_its_own_document_and_line(vc: Vc, write_manifest: Write) -> None:
    """Warnings of many objects of one file: each is located in its own document (the
    lines are found again from the file's text)."""
    docs = [FLOW.replace("solo", f"f{i}") for i in range(3)]
    listed = "kind: List\napiVersion: v1\nitems:\n" + FLOW.replace("solo", "l").replace(
        "\n", "\n    "
    ).replace("apiVersion", "  - apiVersion", 1)
    path = write_manifest("---\n".join([*docs, listed]), name="flows.yaml")
    result = vc("apply", "-f", path)
    assert result.exit_code == 0, result.output
    lines = result.stderr.splitlines()
    expected = ["6", "13 (document 2)", "20 (document 3)", "30 (document 4)"]
    assert [line.split(": spec.flows")[0] for line in lines] == [
        f"Warning: {path}:{where}: JobFlow default/{name}"
        for where, name in zip(expected, ["f0", "f1", "f2", "l"], strict=True)
    ]


@pytest.mark.parametrize(
    "text", [pytest.param("", id="empty-file"), pytest.param("a: [", id="bad-yaml")]
)
def test_nothing_to_apply_is_one_line(vc: Vc, write_manifest: Write, text: str) -> None:
    result = vc("apply", "-f", write_manifest(text))
    assert result.exit_code == 1
    assert len(result.stderr.splitlines()) == 1
    assert "Traceback" not in result.stderr


def test_apply_from_stdin(vc: Vc) -> None:
    result = vc("apply", "-f", "-", input=TEMPLATE.format(name="x", min=1))
    assert result.stdout == "jobtemplate.flow.volcano.sh/x created\n"


def test_state_dir_from_environment(
    tmp_path: Path, write_manifest: Write, monkeypatch: pytest.MonkeyPatch
) -> None:
    from typer.testing import CliRunner

    from vcflow.cli.app import app

    monkeypatch.setenv("VCFLOW_STATE_DIR", str(tmp_path / "env-state"))
    result = CliRunner().invoke(app, ["apply", "-f", str(write_manifest(FLOW))])
    assert result.exit_code == 0, result.output
    assert (tmp_path / "env-state" / "vcflow.db").is_file()
