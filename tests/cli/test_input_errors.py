"""Inputs that ended in `internal error` (or passed `validate` and failed later): each is now
one line naming what is wrong, exit 1 (2 for a usage error), no traceback, nothing written."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import Result

Vc = Callable[..., Result]

TEMPLATE = """apiVersion: flow.volcano.sh/v1alpha1
kind: JobTemplate
metadata: {name: t}
spec:
  minAvailable: 1
  tasks:
    - name: main
      replicas: 1
      template:
        spec:
          restartPolicy: Never
          containers:
            - name: c
              command: [%s]
              env: [%s]
"""


def one_line(result: Result, code: int = 1) -> str:
    assert result.exit_code == code, result.output + result.stderr
    assert "Traceback" not in result.output + result.stderr
    assert "internal error" not in result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, lines
    return lines[0]


def test_a_5000_digit_number(vc: Vc, tmp_path: Path) -> None:
    path = tmp_path / "t.json"
    path.write_text(
        '{"apiVersion": "flow.volcano.sh/v1alpha1", "kind": "JobTemplate",\n'
        '"spec": {"minAvailable": ' + "9" * 5000 + "}}"
    )
    line = one_line(vc("validate", "-f", path))
    assert line.startswith(f"{path}:2: invalid JSON: a number of 5000 digits")


def test_a_lone_surrogate_is_refused_at_validate_not_at_apply(vc: Vc, tmp_path: Path) -> None:
    path = tmp_path / "t.json"
    path.write_text(
        '{"apiVersion": "flow.volcano.sh/v1alpha1", "kind": "JobTemplate", '
        '"metadata": {"name": "t", "annotations": {"a": "\\udc80"}}}'
    )
    for verb in ("validate", "apply"):
        assert "lone surrogate" in one_line(vc(verb, "-f", path))
    assert not (tmp_path / "state").exists()  # nothing written


def test_a_deeply_nested_patch(vc: Vc, tmp_path: Path) -> None:
    path = tmp_path / "t.yaml"
    path.write_text(TEMPLATE % ('"true"', ""))
    assert vc("apply", "-f", path).exit_code == 0
    body = '{"a":' * 10_000 + "1" + "}" * 10_000
    line = one_line(vc("patch", "jt", "t", "-p", body))
    assert line.endswith("nested too deeply (more than 100 levels)")
    assert len(line) < 200  # the patch is not printed whole


@pytest.mark.parametrize(
    ("command", "env", "field", "problem"),
    [
        ('"true"', '{name: "A=B", value: "1"}', "env[0].name", "other than '='"),
        ('"true"', '{name: "A\\0", value: "1"}', "env[0].name", "other than '='"),
        ('"true"', '{name: A, value: "a\\0b"}', "env[0].value", "must not contain a NUL"),
        ('"echo", "a\\0b"', "", "command[1]", "must not contain a NUL"),
    ],
    ids=["env-equals", "env-nul", "env-value-nul", "arg-nul"],
)
def test_what_no_process_can_be_given_is_refused_at_validate(
    vc: Vc, tmp_path: Path, command: str, env: str, field: str, problem: str
) -> None:
    path = tmp_path / "t.yaml"
    path.write_text(TEMPLATE % (command, env))
    line = one_line(vc("validate", "-f", path))
    assert f"spec.tasks[0].template.spec.containers[0].{field}:" in line and problem in line
    assert "\x00" not in line


def test_a_relative_working_dir_is_warned_of(vc: Vc, tmp_path: Path) -> None:
    path = tmp_path / "t.yaml"
    path.write_text((TEMPLATE % ('"true"', "")).replace("env: []", "workingDir: data"))
    result = vc("validate", "-f", path)
    assert result.exit_code == 0
    assert "Warning: " in result.stderr and 'workingDir "data" is relative' in result.stderr


def test_an_argument_that_is_not_utf8_is_a_usage_error(vc: Vc) -> None:
    name = b"\xed\xa0\x80".decode("utf-8", "surrogateescape")  # what argv gives Python
    line = one_line(vc("get", "jt", name), code=2)
    assert line == "Error: Invalid value: '\\xed\\xa0\\x80' is not valid UTF-8 text"


@pytest.mark.parametrize("verb", ["validate", "apply", "delete", "graph", "run"])
def test_an_empty_path_reads_no_directory(
    vc: Vc, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, verb: str
) -> None:
    """`-f "$UNSET"` names no file: it once read every manifest of the working directory
    (Path("") is "."), so `delete -f ""` deleted what they held."""
    (tmp_path / "t.yaml").write_text(TEMPLATE % ('"true"', ""))
    monkeypatch.chdir(tmp_path)
    assert vc("apply", "-f", "t.yaml").exit_code == 0
    line = one_line(vc(verb, "-f", ""))
    assert line == 'the path "" does not exist (an empty -f names no file)'
    assert "t" in vc("get", "jt", "-o", "name").stdout  # nothing deleted


VOLUMES = """          volumes:
            - {name: data, emptyDir: {}}
            - {name: data, hostPath: {path: /tmp}}
"""


def test_a_mount_of_no_volume_is_refused_not_run_without_it(vc: Vc, tmp_path: Path) -> None:
    """A volumeMount naming no volume of the pod (a typo) passed validate and `run` ran the
    container without the mount; Kubernetes (Volcano's job webhook) refuses it."""
    path = tmp_path / "t.yaml"
    text = TEMPLATE % ('"true"', "")
    path.write_text(text + "              volumeMounts: [{name: date, mountPath: /data}]\n")
    for verb in ("validate", "apply"):
        assert one_line(vc(verb, "-f", path)) == (
            f"{path}:16: JobTemplate default/t: "
            "spec.tasks[0].template.spec.containers[0].volumeMounts[0].name: "
            'spec.task[0].template.spec.containers[0].volumeMounts[0].name: Not found: "date"'
        )
    assert not (tmp_path / "state").exists()  # nothing written
    text = text.replace(
        "          restartPolicy: Never\n", "          restartPolicy: Never\n" + VOLUMES
    )
    path.write_text(text + "              volumeMounts: [{name: data, mountPath: /data}]\n")
    line = one_line(vc("validate", "-f", path))
    assert line.endswith('spec.task[0].template.spec.volumes[1].name: Duplicate value: "data"')


def test_a_flow_without_a_name_is_one_error(vc: Vc, tmp_path: Path) -> None:
    """Not also `generated pod name "-t-main-0"` for each entry, a consequence of it."""
    path = tmp_path / "f.yaml"
    flow = "apiVersion: flow.volcano.sh/v1alpha1\nkind: JobFlow\nspec: {flows: [{name: t}]}\n"
    path.write_text(TEMPLATE % ('"true"', "") + "---\n" + flow)
    line = one_line(vc("validate", "-f", path))
    assert (
        line == f"{path}:17 (document 2): JobFlow: metadata.name: Required value: name is required"
    )


def test_an_empty_namespace_is_the_default_one(vc: Vc, tmp_path: Path) -> None:
    """`-n "$NS"` with NS unset: `apply` read the object back in namespace "" and then
    failed to create it again (`JobTemplate default/t already exists`, exit 1); `get` looked
    in "" (`No resources found in  namespace.`). kubectl reads it as the default namespace."""
    path = tmp_path / "t.yaml"
    path.write_text(TEMPLATE % ('"true"', ""))
    assert vc("apply", "-f", path, "-n", "").stdout == "jobtemplate.flow.volcano.sh/t created\n"
    result = vc("apply", "-f", path, "-n", "")
    assert (result.exit_code, result.stdout) == (0, "jobtemplate.flow.volcano.sh/t unchanged\n")
    assert vc("get", "jt", "-n", "", "-o", "name").stdout == "jobtemplate.flow.volcano.sh/t\n"


def test_a_symlink_loop_says_so(vc: Vc, tmp_path: Path) -> None:
    """Not `no such file or directory`, which sent users looking for a typo."""
    (tmp_path / "a.yaml").symlink_to(tmp_path / "b.yaml")
    (tmp_path / "b.yaml").symlink_to(tmp_path / "a.yaml")
    line = one_line(vc("validate", "-f", tmp_path / "a.yaml"))
    assert line == f"{tmp_path / 'a.yaml'}: too many levels of symbolic links"
    assert one_line(vc("apply", "-f", tmp_path / "c.yaml")).endswith(
        "c.yaml: no such file or directory"
    )
