"""Unknown fields from every command that takes manifests (`validate`, `apply`, `run`), by
`--validate` as kubectl's: `strict` (the default) refuses them, one error line each with
file and line, nothing written; `warn` prints kubectl's `Warning: ...` lines in line order
and does the work; `ignore` says nothing of them. Where a vcflow field does the job (Argo's
`withItems`, `depends`), the line says which. Pod-less jobs are warned about in every mode."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
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


@pytest.mark.parametrize("mode", [[], ["--validate=strict"], ["--validate", "true"]])
def test_validate_refuses_unknown_fields_by_default(
    vc: Vc, tmp_path: Path, mode: list[str]
) -> None:
    path = tmp_path / "m.yaml"
    path.write_text(MANIFEST)
    result = vc("validate", "-f", path, *mode)
    assert result.exit_code == 1, result.output
    assert result.stderr.splitlines() == [w.format(path=path) for w in WARNINGS]
    assert result.stdout == "jobflow.flow.volcano.sh/f validated\n"


def test_validate_warn_warns_with_file_and_line(vc: Vc, tmp_path: Path) -> None:
    path = tmp_path / "m.yaml"
    path.write_text(MANIFEST)
    result = vc("validate", "-f", path, "--validate=warn")
    assert result.exit_code == 0, result.output
    assert warnings(result) == [w.format(path=path) for w in WARNINGS]


@pytest.mark.parametrize("mode", ["ignore", "false"])
def test_validate_ignore_says_nothing(vc: Vc, tmp_path: Path, mode: str) -> None:
    path = tmp_path / "m.yaml"
    path.write_text(MANIFEST)
    result = vc("validate", "-f", path, f"--validate={mode}")
    assert result.exit_code == 0, result.output
    assert result.stderr == ""


def test_a_bad_mode_is_a_usage_error(vc: Vc, tmp_path: Path) -> None:
    path = tmp_path / "m.yaml"
    path.write_text(MANIFEST)
    result = vc("validate", "-f", path, "--validate=loose")
    assert result.exit_code == 2
    assert "'loose': must be one of strict (true), warn, ignore (false)" in result.stderr


def test_apply_refuses_and_writes_nothing(vc: Vc, tmp_path: Path, state_dir: Path) -> None:
    path = tmp_path / "m.yaml"
    path.write_text(MANIFEST)
    result = vc("apply", "-f", path)
    assert result.exit_code == 1, result.output
    assert result.stderr.splitlines() == [w.format(path=path) for w in WARNINGS]
    assert result.stdout == ""
    assert not (state_dir / "vcflow.db").exists()


def test_apply_warn_warns_and_writes(vc: Vc, tmp_path: Path) -> None:
    path = tmp_path / "m.yaml"
    path.write_text(MANIFEST)
    result = vc("apply", "-f", path, "--validate=warn")
    assert result.exit_code == 0, result.output
    assert warnings(result) == [w.format(path=path) for w in WARNINGS]
    assert "jobtemplate.flow.volcano.sh/a created" in result.stdout


def test_apply_ignore_writes_and_says_nothing(vc: Vc, tmp_path: Path) -> None:
    path = tmp_path / "m.yaml"
    path.write_text(MANIFEST)
    result = vc("apply", "-f", path, "--validate=ignore")
    assert result.exit_code == 0, result.output
    assert result.stderr == ""
    assert "jobtemplate.flow.volcano.sh/a created" in result.stdout


def test_run_refuses_then_warn_runs(vc: Vc, tmp_path: Path, state_dir: Path) -> None:
    path = tmp_path / "m.yaml"
    path.write_text(MANIFEST)
    refused = vc("run", "-f", path, "--no-live", "--timeout", "60")
    assert refused.exit_code == 1, refused.output
    assert refused.stderr.splitlines() == [w.format(path=path) for w in WARNINGS]
    assert not (state_dir / "vcflow.db").exists()
    result = vc("run", "-f", path, "--no-live", "--timeout", "60", "--validate=warn")
    assert result.exit_code == 0, result.output + result.stderr
    assert [w.format(path=path) for w in WARNINGS] == warnings(result)[:2]
    assert "flow f Succeed" in result.stdout


ARGO = """\
apiVersion: flow.volcano.sh/v1alpha1
kind: JobFlow
metadata: {name: argo}
spec:
  flows:
    - name: a
      withItems: [1, 2]
    - name: b
      depends: a.Failed
"""


def test_another_engine_s_field_says_the_vcflow_field(vc: Vc, tmp_path: Path) -> None:
    path = tmp_path / "argo.yaml"
    path.write_text(ARGO)
    result = vc("validate", "-f", path)
    assert result.exit_code == 1, result.output
    errors = [line for line in result.stderr.splitlines() if not line.startswith("Warning:")]
    assert errors == [
        f"{path}:7: JobFlow default/argo: spec.flows[0].withItems: unknown field "
        '"spec.flows[0].withItems" (use "for" (items, fromArgument or fromOutput): '
        "docs/flow-features.md section 19)",
        f"{path}:9: JobFlow default/argo: spec.flows[1].depends: unknown field "
        '"spec.flows[1].depends" (use "dependsOn" with "outcome": Completed, Failed or '
        "Finished)",
    ]


def test_the_flow_language_s_fields_are_known(vc: Vc, tmp_path: Path) -> None:
    path = tmp_path / "known.yaml"
    path.write_text(
        ARGO.replace("withItems: [1, 2]", "template: t").replace(
            "depends: a.Failed", "dependsOn: {targets: [a], outcome: Failed}"
        )
        + "  arguments: [{name: x, value: '1', description: a value}]\n"
    )
    result = vc("validate", "-f", path)
    assert result.exit_code == 0, result.output
    assert "unknown field" not in result.stderr


def test_a_template_with_typos_never_validates_clean(vc: Vc, tmp_path: Path) -> None:
    """The template of issue 12: every typo is refused, and the job it makes (no pods) is
    warned about; with --validate=warn every typo warns."""
    path = tmp_path / "typos.yaml"
    path.write_text(TYPOS)
    refused = vc("validate", "-f", path)
    assert refused.exit_code == 1
    assert "every task has 0 replicas" in refused.stderr
    result = vc("validate", "-f", path, "--validate=warn")
    assert result.exit_code == 0
    assert [w.split(": ", 3)[2] for w in warnings(result)] == [
        "spec.minAvailble",
        "spec.polices",
        "spec.tasks",
        "spec.tasks[0].replica",
    ]
    assert "every task has 0 replicas" in result.stderr
