"""`vcflow get` as kubectl users type it: -l, --field-selector, -o jsonpath=...,
-o custom-columns=..., --sort-by, --no-headers, several kinds (`jf,jt`), KIND/NAME
arguments, and a bad -o as a one-line usage error; the same through a server."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import Result

from .conftest import EXAMPLE, Vc
from .test_remote import Remote, remote, same_eventually, served  # noqa: F401 (fixtures)

Write = Callable[..., Path]
Phase = Callable[[str, str], Result]

LABELLED = """apiVersion: flow.volcano.sh/v1alpha1
kind: JobTemplate
metadata: {name: x, labels: {team: blue, tier: "2"}}
spec:
  minAvailable: 3
  tasks:
    - name: t
      replicas: 3
      template: {spec: {restartPolicy: Never, containers: [{name: c, image: busybox}]}}
---
apiVersion: flow.volcano.sh/v1alpha1
kind: JobTemplate
metadata: {name: y, labels: {team: red, tier: "1"}}
spec:
  minAvailable: 2
  tasks:
    - name: t
      replicas: 2
      template: {spec: {restartPolicy: Never, containers: [{name: c, image: busybox}]}}
"""


def ok(result: Result) -> str:
    assert result.exit_code == 0, result.output
    return result.stdout


@pytest.fixture
def labelled(example: Result, vc: Vc, write_manifest: Write) -> None:
    ok(vc("apply", "-f", write_manifest(LABELLED)))


def test_label_selector(labelled: None, vc: Vc) -> None:
    assert ok(vc("get", "jt", "-l", "team=blue", "-o", "name")) == "jobtemplate.flow.volcano.sh/x\n"
    assert ok(vc("get", "jt", "--selector", "team", "-o", "name")).splitlines() == [
        "jobtemplate.flow.volcano.sh/x",
        "jobtemplate.flow.volcano.sh/y",
    ]
    assert len(ok(vc("get", "jt", "-l", "!team", "-o", "name")).splitlines()) == 5
    assert ok(vc("get", "jt", "-l", "team in (red,green),tier!=2", "--no-headers")).split()[0] == (
        "y"
    )
    none = vc("get", "jt", "-l", "team=green")
    assert (none.exit_code, none.stdout) == (0, "")
    assert none.stderr == "No resources found in default namespace.\n"


def test_field_selector(labelled: None, vc: Vc) -> None:
    got = ok(vc("get", "jt", "--field-selector", "metadata.name=x", "-o", "name"))
    assert got == "jobtemplate.flow.volcano.sh/x\n"
    names = ok(
        vc("get", "jt", "--field-selector", "metadata.name!=x,metadata.name!=a", "-o", "name")
    )
    assert [n.split("/")[1] for n in names.splitlines()] == ["b", "c", "d", "e", "y"]
    scoped = ok(
        vc("get", "jt", "-A", "--field-selector", "metadata.namespace==default", "-o", "name")
    )
    assert len(scoped.splitlines()) == 7
    bad = vc("get", "jt", "--field-selector", "spec.queue=default")
    assert (bad.exit_code, bad.stderr) == (1, 'field label not supported: "spec.queue"\n')
    bad = vc("get", "jt", "--field-selector", "metadata.name")
    assert bad.exit_code == 1 and bad.stderr.count("\n") == 1


def test_a_bad_label_selector_is_one_line(vc: Vc) -> None:
    result = vc("get", "jt", "-l", "team in (x")
    assert (result.exit_code, result.stderr) == (1, 'invalid label selector term "team in (x"\n')


def test_names_and_selectors_do_not_mix(labelled: None, vc: Vc) -> None:
    for selector in (("-l", "team"), ("--field-selector", "metadata.name=x")):
        result = vc("get", "jt", "x", *selector)
        assert result.exit_code == 2
        assert "name cannot be provided when a selector is specified" in result.stderr


def test_jsonpath(labelled: None, vc: Vc) -> None:
    assert ok(vc("get", "jt", "-o", "jsonpath={.items[*].metadata.name}")) == "a b c d e x y"
    lines = "jsonpath={range .items[*]}{.metadata.name}{'\\t'}{.spec.minAvailable}{\"\\n\"}{end}"
    assert ok(vc("get", "jt", "-l", "team", "-o", lines)) == "x\t3\ny\t2\n"
    one = ok(vc("get", "jf", "test", "-o", "jsonpath={.status.state.phase}"))
    assert one == "Pending"
    labels = ok(vc("get", "jt", "x", "-o", "jsonpath={.metadata.labels}"))
    assert json.loads(labels) == {"team": "blue", "tier": "2"}
    picked = 'jsonpath={.items[?(@.metadata.labels.team=="red")].metadata.name}'
    assert ok(vc("get", "jt", "-o", picked)) == "y"
    assert ok(vc("get", "jt", "x", "-o", "jsonpath=[{.nope}]")) == "[]"
    empty = vc("get", "jt", "-l", "team=green", "-o", "jsonpath={.items}")
    assert (empty.exit_code, empty.stdout, empty.stderr) == (0, "[]", "")


def test_jsonpath_of_a_label_with_dots_and_a_slash(example: Result, vc: Vc) -> None:
    ok(
        vc(
            "patch",
            "jt",
            "a",
            "--type",
            "merge",
            "-p",
            '{"metadata":{"labels":{"vcflow.io/x":"1"}}}',
        )
    )
    template = "jsonpath={.metadata.labels.vcflow\\.io/x}"
    assert ok(vc("get", "jt", "a", "-o", template)) == "1"


def test_custom_columns(labelled: None, vc: Vc, set_phase: Phase) -> None:
    set_phase("test-a", "Running")
    spec = "custom-columns=NAME:.metadata.name,PHASE:.status.state.phase"
    assert ok(vc("get", "vj", "-o", spec)).splitlines() == ["NAME     PHASE", "test-a   Running"]
    spec = "custom-columns=name:{.metadata.name},MIN:.spec.minAvailable,TEAM:.metadata.labels.team"
    assert ok(vc("get", "jt", "-l", "team", "-o", spec)).splitlines() == [
        "name   MIN   TEAM",
        "x      3     blue",
        "y      2     red",
    ]
    spec = "custom-columns=N:.metadata.name,L:.metadata.labels,T:.spec.tasks[*].name,X:.nope"
    assert ok(vc("get", "jt", "x", "-o", spec, "--no-headers")).split() == [
        "x",
        "map[team:blue",
        "tier:2]",
        "t",
        "<none>",
    ]


def test_sort_by(labelled: None, vc: Vc) -> None:
    by_min = ok(vc("get", "jt", "-l", "team", "--sort-by", ".spec.minAvailable", "-o", "name"))
    assert by_min.splitlines() == ["jobtemplate.flow.volcano.sh/y", "jobtemplate.flow.volcano.sh/x"]
    by_tier = ok(vc("get", "jt", "--sort-by={.metadata.labels.tier}", "--no-headers"))
    assert [line.split()[0] for line in by_tier.splitlines()] == [*"abcde", "y", "x"]
    desc = ok(
        vc("get", "jt", "--sort-by", "metadata.name", "-o", "jsonpath={.items[0].metadata.name}")
    )
    assert desc == "a"


def test_no_headers(example: Result, vc: Vc) -> None:
    lines = ok(vc("get", "jt", "--no-headers")).splitlines()
    assert [line.split()[0] for line in lines] == list("abcde")
    wide = ok(vc("get", "jf", "-o", "wide", "--no-headers")).split()
    assert wide[0] == "test" and wide[-2:] == ["0/5", "<unknown>"]


def test_several_kinds_as_kubectl_prints_them(example: Result, vc: Vc) -> None:
    printed = ok(vc("get", "jf,jt"))
    flows, templates = printed.split("\n\n")
    assert flows.splitlines()[0].split() == ["NAME", "STATUS", "AGE"]
    assert flows.splitlines()[1].split()[:2] == ["jobflow.flow.volcano.sh/test", "Pending"]
    assert templates.splitlines()[0].split() == ["NAME", "AGE"]
    assert [line.split()[0] for line in templates.splitlines()[1:]] == [
        f"jobtemplate.flow.volcano.sh/{name}" for name in "abcde"
    ]
    bare = ok(vc("get", "jobflows,jt", "--no-headers")).splitlines()
    assert len(bare) == 6 and "" not in bare
    listed = json.loads(ok(vc("get", "jf,jt", "-o", "json")))
    assert [item["kind"] for item in listed["items"]] == ["JobFlow"] + ["JobTemplate"] * 5
    assert ok(vc("get", "jf,vj", "-o", "name")).splitlines() == [
        "jobflow.flow.volcano.sh/test",
        "job.batch.volcano.sh/test-a",
    ]


def test_one_kind_of_several_found_prints_plain_names(example: Result, vc: Vc) -> None:
    """As kubectl: the kind prefix only when objects of several kinds are printed."""
    printed = ok(vc("get", "jf,cm")).splitlines()
    assert printed[1].split()[0] == "test"


def test_kind_slash_name_arguments(example: Result, vc: Vc) -> None:
    printed = ok(vc("get", "jf/test", "jt/a", "jobtemplate/b"))
    flows, templates = printed.split("\n\n")
    assert flows.splitlines()[1].split()[0] == "jobflow.flow.volcano.sh/test"
    assert [line.split()[0] for line in templates.splitlines()[1:]] == [
        "jobtemplate.flow.volcano.sh/a",
        "jobtemplate.flow.volcano.sh/b",
    ]
    one = json.loads(ok(vc("get", "jt/a", "-o", "json")))
    assert (one["kind"], one["metadata"]["name"]) == ("JobTemplate", "a")
    plain = ok(vc("get", "jt/a", "jt/b")).splitlines()
    assert [line.split()[0] for line in plain] == ["NAME", "a", "b"]
    missing = vc("get", "jt/a", "jf/nope")
    assert missing.exit_code == 1
    assert missing.stdout.splitlines()[1].split()[0] == "a"
    assert missing.stderr == (
        'Error from server (NotFound): jobflows.flow.volcano.sh "nope" not found\n'
    )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["get", "jf", "jt/a"],
            "there is no need to specify a resource type as a separate argument",
        ),
        (["get", "jt/a", "b"], "arguments in resource/name form must have a single resource"),
        (["get", "jt/"], "arguments in resource/name form must have a single resource"),
        (["get", "jf,nope"], 'unknown kind "nope"'),
        (["get", "jf,jt", "-w"], "watch is only supported on one kind at a time"),
        (["get", "jt", "--sort-by", "{.a"], "invalid JSONPath"),
    ],
)
def test_argument_errors_are_usage_errors(vc: Vc, args: list[str], message: str) -> None:
    result = vc(*args)
    assert result.exit_code == 2, result.output
    assert message in " ".join(result.stderr.split())
    assert "Traceback" not in result.output


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("table", 'unknown output format "table": use yaml, json, name, wide, jsonpath='),
        ("jsonpath", "jsonpath format specified but no template given"),
        ("jsonpath=", "jsonpath format specified but no template given"),
        ("custom-columns", "custom-columns format specified but no custom columns given"),
        ("jsonpath={.items[*", "error parsing jsonpath {.items[*: unclosed action"),
        ("jsonpath={end}", "{end} with no {range}"),
        ("jsonpath={range .items[*]}x", "{range} with no {end}"),
        ("custom-columns=NAME", 'unexpected custom-columns spec "NAME"'),
        ("yaml=x", '"yaml" takes no "=x"'),
    ],
)
def test_a_bad_output_is_a_one_line_usage_error(vc: Vc, value: str, message: str) -> None:
    result = vc("get", "jt", "-o", value)
    assert result.exit_code == 2, result.output
    error = [line for line in result.stderr.splitlines() if line.startswith("Error:")]
    assert len(error) == 1
    assert message in error[0]
    assert "Value error" not in result.stderr and "Traceback" not in result.output


def test_output_with_an_equals_sign_as_kubectl_takes_it(example: Result, vc: Vc) -> None:
    assert ok(vc("get", "jf", "-o=name")) == "jobflow.flow.volcano.sh/test\n"


def test_the_same_through_a_server(remote: Remote, vc: Vc) -> None:  # noqa: F811
    same_eventually(remote, vc, "apply", "-f", EXAMPLE)
    status = json.dumps({"status": {"state": {"phase": "Running"}}})
    patch = ("patch", "vcjob", "test-a", "--subresource", "status", "--type", "merge", "-p")
    same_eventually(remote, vc, *patch, status)
    labels = '{"metadata":{"labels":{"team":"blue"}}}'
    same_eventually(remote, vc, "patch", "jt", "c", "--type", "merge", "-p", labels)
    for args in (
        ("get", "jf,jt"),
        ("get", "jf/test", "jt/a", "--no-headers"),
        ("get", "jt", "-l", "team=blue", "-o", "name"),
        ("get", "jt", "-l", "team!=blue", "--field-selector", "metadata.name!=a", "-o", "name"),
        ("get", "jt", "--field-selector", "spec.x=1"),
        ("get", "jt", "-o", "jsonpath={range .items[*]}{.metadata.name}{'\\n'}{end}"),
        ("get", "vj", "-o", "custom-columns=NAME:.metadata.name,PHASE:.status.state.phase"),
        ("get", "jt", "--sort-by", ".metadata.labels.team", "-o", "name"),
        ("get", "jf", "-o", "table"),
    ):
        same_eventually(remote, vc, *args)
