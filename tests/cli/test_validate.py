"""`vcflow validate`: examples, inputs (stdin, JSON, List, directories) and one-line problems."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml
from typer.testing import Result

Invoke = Callable[..., Result]
Write = Callable[..., Path]
EXAMPLES = Path(__file__).resolve().parents[2] / "examples"

FLOW = "apiVersion: flow.volcano.sh/v1alpha1\nkind: JobFlow\n"
TEMPLATE = "apiVersion: flow.volcano.sh/v1alpha1\nkind: JobTemplate\n"
TASK = (
    "{name: t, replicas: 1, template: {spec: {restartPolicy: Never, "
    "containers: [{name: c, image: busybox}]}}}"
)


def template(name: str) -> str:
    return f"{TEMPLATE}metadata: {{name: {name}}}\nspec:\n  tasks:\n    - {TASK}\n"


def flow(name: str, entries: str) -> str:
    return f"{FLOW}metadata: {{name: {name}}}\nspec:\n  flows:\n{entries}"


def stderr_lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if line]


def assert_one_line_problems(stderr: str) -> None:
    assert "Traceback" not in stderr
    assert "internal error" not in stderr


def test_volcano_example_directory_validates(vcflow_cli: Invoke) -> None:
    result = vcflow_cli("validate", "-f", EXAMPLES / "jobflow")
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines() == [
        "jobflow.flow.volcano.sh/test validated",
        *(f"jobtemplate.flow.volcano.sh/{n} validated" for n in "abcde"),
    ]
    assert result.stderr == ""


@pytest.mark.parametrize(
    ("folder", "flow_name", "count"),
    [("patch", "patched", 3), ("diamond", "diamond", 5), ("fanout", "fanout", 19)],
)
def test_vcflow_examples_validate(
    vcflow_cli: Invoke, folder: str, flow_name: str, count: int
) -> None:
    result = vcflow_cli("validate", "--filename", EXAMPLES / "jobflow" / folder)
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert len(lines) == count
    assert f"jobflow.flow.volcano.sh/{flow_name} validated" in lines
    assert result.stderr == ""


def test_several_filenames_are_validated_together(vcflow_cli: Invoke) -> None:
    folder = EXAMPLES / "jobflow"
    result = vcflow_cli(
        "validate", "-f", folder / "JobFlow.yaml", "-f", folder / "JobTemplate.yaml"
    )
    assert result.exit_code == 0, result.output
    assert result.stderr == ""


def test_flow_alone_warns_about_each_missing_template(vcflow_cli: Invoke) -> None:
    result = vcflow_cli("validate", "-f", EXAMPLES / "jobflow" / "JobFlow.yaml")
    assert result.exit_code == 0
    assert result.stdout == "jobflow.flow.volcano.sh/test validated\n"
    warnings = stderr_lines(result.stderr)
    assert len(warnings) == 5
    assert all(w.startswith("Warning: ") for w in warnings)
    assert 'JobFlow default/test: spec.flows[0].name: JobTemplate "a"' in warnings[0]
    assert "examples/jobflow/JobFlow.yaml:9:" in warnings[0]


def test_templates_resolve_only_within_their_namespace(
    vcflow_cli: Invoke, write_manifest: Write
) -> None:
    other = template("a").replace("{name: a}", "{name: a, namespace: other}")
    path = write_manifest(other + "---\n" + flow("f", "    - name: a\n"))
    result = vcflow_cli("validate", "-f", path)
    assert result.exit_code == 0
    assert 'JobTemplate "a" not found; the entry will wait' in result.stderr


def test_stdin(vcflow_cli: Invoke) -> None:
    text = (EXAMPLES / "jobflow" / "diamond" / "flow.yaml").read_text()
    result = vcflow_cli("validate", "-f", "-", input=text)
    assert result.exit_code == 0, result.output
    assert "jobflow.flow.volcano.sh/diamond validated" in result.stdout


def test_stdin_problem_names_stdin(vcflow_cli: Invoke) -> None:
    result = vcflow_cli("validate", "-f", "-", input=flow("f", "    - name: a\n    - name: a\n"))
    assert result.exit_code == 1
    errors = [line for line in stderr_lines(result.stderr) if not line.startswith("Warning: ")]
    assert errors == [
        '<stdin>:7: JobFlow default/f: spec.flows[1].name: jobflow Flow names must be unique: "a"'
    ]


def test_stdin_that_is_not_utf8_is_one_line(vcflow_cli: Invoke) -> None:
    result = vcflow_cli("validate", "-f", "-", input=b"kind: \xff\xfe\n")
    assert result.exit_code == 1
    assert stderr_lines(result.stderr) == ["<stdin>: not UTF-8 text (invalid start byte)"]


def test_json_file(vcflow_cli: Invoke, write_manifest: Write) -> None:
    docs = list(yaml.safe_load_all((EXAMPLES / "jobflow" / "JobTemplate.yaml").read_text()))
    path = write_manifest(json.dumps(docs[0], indent=2), "template.json")
    result = vcflow_cli("validate", "-f", path)
    assert result.exit_code == 0, result.output
    assert result.stdout == "jobtemplate.flow.volcano.sh/a validated\n"


def test_json_syntax_error_has_line(vcflow_cli: Invoke, write_manifest: Write) -> None:
    path = write_manifest('{\n  "kind": "JobFlow",\n  oops\n}\n', "bad.json")
    result = vcflow_cli("validate", "-f", path)
    assert result.exit_code == 1
    assert stderr_lines(result.stderr) == [
        f"{path}:3: invalid JSON: Expecting property name enclosed in double quotes"
    ]


def test_kind_list(vcflow_cli: Invoke, write_manifest: Write) -> None:
    items = [yaml.safe_load(template("a")), yaml.safe_load(flow("f", "    - name: a\n"))]
    path = write_manifest(yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": items}))
    result = vcflow_cli("validate", "-f", path)
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines() == [
        "jobtemplate.flow.volcano.sh/a validated",
        "jobflow.flow.volcano.sh/f validated",
    ]
    assert result.stderr == ""


def test_duplicate_yaml_key(vcflow_cli: Invoke, write_manifest: Write) -> None:
    path = write_manifest(f"{FLOW}metadata:\n  name: a\n  name: b\n")
    result = vcflow_cli("validate", "-f", path)
    assert result.exit_code == 1
    assert stderr_lines(result.stderr) == [
        f'{path}:5: invalid YAML: mapping key "name" already defined at line 4'
    ]


def test_cycle_is_named_by_its_path(vcflow_cli: Invoke, write_manifest: Write) -> None:
    entries = (
        "    - name: a\n"
        "    - name: b\n      dependsOn: {targets: [a, d]}\n"
        "    - name: c\n      dependsOn: {targets: [b]}\n"
        "    - name: d\n      dependsOn: {targets: [c]}\n"
    )
    path = write_manifest("".join(template(n) + "---\n" for n in "abcd") + flow("loop", entries))
    result = vcflow_cli("validate", "-f", path)
    assert result.exit_code == 1
    assert "jobflow.flow.volcano.sh/loop" not in result.stdout
    assert result.stdout.count("validated") == 4
    (line,) = stderr_lines(result.stderr)
    assert line.endswith(
        "JobFlow default/loop: spec.flows[1].dependsOn.targets: "
        "jobflow Flow is not DAG: cycle b → c → d → b"
    )
    assert line.startswith(f"{path}:")


def test_unknown_target_suggests_a_name(vcflow_cli: Invoke, write_manifest: Write) -> None:
    entries = "    - name: prepare\n    - name: train\n      dependsOn: {targets: [prepar]}\n"
    path = write_manifest(
        template("prepare") + "---\n" + template("train") + "---\n" + flow("f", entries)
    )
    result = vcflow_cli("validate", "-f", path)
    assert result.exit_code == 1
    assert stderr_lines(result.stderr) == [
        f"{path}:22 (document 3): JobFlow default/f: spec.flows[1].dependsOn.targets[0]: "
        'jobflow Flow is not DAG: vertex is not defined: prepar (did you mean "prepare"?)'
    ]


def test_schema_error_has_field_path_and_line(vcflow_cli: Invoke, write_manifest: Write) -> None:
    path = write_manifest(
        f"{TEMPLATE}metadata: {{name: t}}\nspec:\n  tasks:\n    - name: x\n      replicas: many\n"
    )
    result = vcflow_cli("validate", "-f", path)
    assert result.exit_code == 1
    assert stderr_lines(result.stderr) == [
        f'{path}:7: JobTemplate default/t: spec.tasks[0].replicas: Invalid value: "many": '
        "must be of type integer"
    ]


def test_duplicate_object_is_an_error_on_the_second(
    vcflow_cli: Invoke, write_manifest: Write
) -> None:
    first = write_manifest(template("a"), "one.yaml")
    second = write_manifest(template("a"), "two.yaml")
    result = vcflow_cli("validate", "-f", first, "-f", second)
    assert result.exit_code == 1
    assert result.stdout == "jobtemplate.flow.volcano.sh/a validated\n"
    assert stderr_lines(result.stderr) == [
        f"{second}:1: JobTemplate default/a: duplicate object: JobTemplate default/a is "
        f"already given at {first}:1"
    ]


def test_same_name_in_two_namespaces_is_no_duplicate(
    vcflow_cli: Invoke, write_manifest: Write
) -> None:
    other = template("a").replace("{name: a}", "{name: a, namespace: other}")
    path = write_manifest(f"{template('a')}---\n{other}")
    assert vcflow_cli("validate", "-f", path).exit_code == 0


def test_every_problem_of_every_file_is_reported(
    vcflow_cli: Invoke, write_manifest: Write, tmp_path: Path
) -> None:
    broken = write_manifest("kind: [\n", "broken.yaml")
    good = write_manifest(template("a"), "good.yaml")
    bad_name = write_manifest(template("Bad_Name"), "name.yaml")
    missing = tmp_path / "missing.yaml"
    result = vcflow_cli("validate", "-f", broken, "-f", missing, "-f", good, "-f", bad_name)
    assert result.exit_code == 1
    lines = stderr_lines(result.stderr)
    assert [line.split(":")[0] for line in lines] == [str(broken), str(missing), str(bad_name)]
    assert lines[1] == f"{missing}: no such file or directory"
    assert "metadata.name" in lines[2]
    assert result.stdout == "jobtemplate.flow.volcano.sh/a validated\n"
    assert_one_line_problems(result.stderr)


def test_directory_without_manifests_gives_no_objects(vcflow_cli: Invoke, tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("hello")
    result = vcflow_cli("validate", "-f", tmp_path)
    assert result.exit_code == 1
    assert stderr_lines(result.stderr) == ["error: no objects passed to validate"]


def test_a_directory_without_manifests_beside_objects_adds_none(
    vcflow_cli: Invoke, write_manifest: Write, tmp_path: Path
) -> None:
    (tmp_path / "empty").mkdir()
    result = vcflow_cli("validate", "-f", tmp_path / "empty", "-f", write_manifest(template("a")))
    assert result.exit_code == 0, result.output
    assert result.stdout == "jobtemplate.flow.volcano.sh/a validated\n"


def test_unknown_kind(vcflow_cli: Invoke, write_manifest: Write) -> None:
    path = write_manifest("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\n")
    result = vcflow_cli("validate", "-f", path)
    assert result.exit_code == 1
    (line,) = stderr_lines(result.stderr)
    assert line.startswith(f'{path}:1: Pod default/p: no kind "Pod" in version "v1"')


def test_vcjob_is_validated(vcflow_cli: Invoke, write_manifest: Write) -> None:
    path = write_manifest(
        f"apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nmetadata: {{name: x}}\n"
        f"spec:\n  tasks:\n    - {TASK}\n"
    )
    result = vcflow_cli("validate", "-f", path)
    assert result.exit_code == 0, result.output
    assert result.stdout == "job.batch.volcano.sh/x validated\n"


def test_alias_bomb_is_one_line_naming_the_file(vcflow_cli: Invoke, write_manifest: Write) -> None:
    """A billion laughs: 10**12 scalars from 1 KB; built into models it would never end."""
    lines = [TEMPLATE, "metadata: {name: a}", f"x0: &a0 [{', '.join(['lol'] * 10)}]"]
    lines += [f"x{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 10)}]" for i in range(1, 12)]
    path = write_manifest("\n".join([*lines, "spec: {tasks: *a11}"]) + "\n", "bomb.yaml")
    result = vcflow_cli("validate", "-f", path)
    assert result.exit_code == 1
    assert stderr_lines(result.stderr) == [
        f"{path}:1: invalid YAML: aliases expand the document to more than 5,000,000 nodes"
    ]
    assert result.stdout == ""


def test_help_says_validate_does_not_read_the_store(vcflow_cli: Invoke) -> None:
    result = vcflow_cli("validate", "--help")
    assert result.exit_code == 0
    text = " ".join(result.stdout.split())
    assert "as the store would" not in text
    assert "without a store" in text
    assert "`apply` also checks the objects against the store" in text


def test_validate_does_not_resolve_against_applied_templates(
    vcflow_cli: Invoke, write_manifest: Write, tmp_path: Path
) -> None:
    """What the help says: a template applied earlier is not seen by validate."""
    state = tmp_path / "state"
    applied = vcflow_cli(
        "--state-dir", state, "apply", "-f", write_manifest(template("a"), "t.yaml")
    )
    assert applied.exit_code == 0, applied.output
    result = vcflow_cli(
        "--state-dir", state, "validate", "-f", write_manifest(flow("f", "    - name: a\n"))
    )
    assert result.exit_code == 0
    assert 'JobTemplate "a" not found' in result.stderr
