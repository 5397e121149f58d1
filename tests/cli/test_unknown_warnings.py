"""Unknown fields and pod-less jobs reach the user from every command that takes manifests:
`validate`, `apply` and `run` print kubectl's `Warning: ...` lines with file and line, in
line order, and still do their work (a warning never rejects)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from typer.testing import Result

Vc = Callable[..., Result]

MANIFEST = """\
apiVersion: flow.volcano.sh/v1alpha1
kind: JobTemplate
metadata: {name: a}
spec:
  minAvailable: 1
  tasks:
    - name: t
      replicas: 1
      template:
        spec:
          restartPolicy: Never
          containers:
            - name: main
              image: busybox
              imagePullPolcy: Always
              command: ["true"]
              env: [{name: A, vaule: "1"}]
---
apiVersion: flow.volcano.sh/v1alpha1
kind: JobFlow
metadata: {name: f}
spec:
  flows:
    - name: a
"""
WARNINGS = [
    "{path}:15: JobTemplate default/a: spec.tasks[0].template.spec.containers[0].imagePullPolcy: "
    'unknown field "spec.tasks[0].template.spec.containers[0].imagePullPolcy"',
    "{path}:17: JobTemplate default/a: spec.tasks[0].template.spec.containers[0].env[0].vaule: "
    'unknown field "spec.tasks[0].template.spec.containers[0].env[0].vaule"',
]

TYPOS = """\
apiVersion: flow.volcano.sh/v1alpha1
kind: JobTemplate
metadata: {name: b}
spec:
  minAvailble: 1
  polices: [{event: PodFailed, action: AbortJob}]
  tasks:
    - name: t
      replica: 2
      template: {spec: {restartPolicy: Never, containers: [{name: c, image: x}]}}
"""


def warnings(result: Result) -> list[str]:
    return [line.removeprefix("Warning: ") for line in result.stderr.splitlines()]


def test_validate_warns_with_file_and_line(vc: Vc, tmp_path: Path) -> None:
    path = tmp_path / "m.yaml"
    path.write_text(MANIFEST)
    result = vc("validate", "-f", path)
    assert result.exit_code == 0, result.output
    assert warnings(result) == [w.format(path=path) for w in WARNINGS]


def test_apply_warns_and_writes(vc: Vc, tmp_path: Path) -> None:
    path = tmp_path / "m.yaml"
    path.write_text(MANIFEST)
    result = vc("apply", "-f", path)
    assert result.exit_code == 0, result.output
    assert warnings(result) == [w.format(path=path) for w in WARNINGS]
    assert "jobtemplate.flow.volcano.sh/a created" in result.stdout


def test_run_warns_and_runs(vc: Vc, tmp_path: Path) -> None:
    path = tmp_path / "m.yaml"
    path.write_text(MANIFEST)
    result = vc("run", "-f", path, "--no-live", "--timeout", "60")
    assert result.exit_code == 0, result.output + result.stderr
    assert [w.format(path=path) for w in WARNINGS] == warnings(result)[:2]
    assert "flow f Succeed" in result.stdout


def test_a_template_with_typos_never_validates_clean(vc: Vc, tmp_path: Path) -> None:
    """The template of issue 12: every typo warns, and so does the job it makes (no pods)."""
    path = tmp_path / "typos.yaml"
    path.write_text(TYPOS)
    result = vc("validate", "-f", path)
    assert result.exit_code == 0
    assert [w.split(": ", 3)[2] for w in warnings(result)] == [
        "spec.minAvailble",
        "spec.polices",
        "spec.tasks",
        "spec.tasks[0].replica",
    ]
    assert "every task has 0 replicas" in result.stderr
