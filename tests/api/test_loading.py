"""vcflow.api.loading: reading manifests (YAML, JSON, List, directories), origins and lines,
schema errors in Kubernetes' words, and exact load → dump round trips."""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from vcflow.api import loading, modelerrors, yamlreader
from vcflow.api.errors import ParseError
from vcflow.api.jobflow import JobFlow
from vcflow.api.jobtemplate import JobTemplate
from vcflow.api.meta import Resource

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
MANIFESTS = sorted(p for p in EXAMPLES.rglob("*") if p.suffix in loading.MANIFEST_SUFFIXES)

RICH_TEMPLATE = """\
apiVersion: flow.volcano.sh/v1alpha1
kind: JobTemplate
metadata:
  name: rich
  namespace: team-a
  labels: {app: demo, date: "2024-01-01"}
  annotations: {note: "kept as is"}
  creationTimestamp: 2024-01-01T00:00:00Z
spec:
  schedulerName: volcano
  minAvailable: 2
  queue: default
  maxRetry: 5
  futureVolcanoField: {enabled: true}
  plugins: {ssh: [], svc: ["--disable-network-policy=true"], env: []}
  policies:
    - {event: PodEvicted, action: RestartJob}
  tasks:
    - name: master
      replicas: 1
      policies:
        - {event: TaskCompleted, action: CompleteJob}
      template:
        metadata:
          labels: {role: master}
        spec:
          nodeSelector: {disk: ssd}
          tolerations:
            - {key: gpu, operator: Exists, effect: NoSchedule}
          affinity:
            nodeAffinity:
              requiredDuringSchedulingIgnoredDuringExecution:
                nodeSelectorTerms:
                  - matchExpressions:
                      - {key: zone, operator: In, values: [a, b]}
          volumes:
            - name: data
              emptyDir: {sizeLimit: 1Gi}
          restartPolicy: OnFailure
          containers:
            - name: main
              image: python:3.11
              imagePullPolicy: IfNotPresent
              command: [sh, -c]
              args: ["python train.py --epochs 3"]
              workingDir: /work
              ports:
                - {containerPort: 8080, name: http}
              env:
                - {name: MODE, value: train}
                - name: POD
                  valueFrom: {fieldRef: {fieldPath: metadata.name}}
              securityContext: {runAsUser: 1000}
              volumeMounts:
                - {name: data, mountPath: /data}
              resources:
                requests: {cpu: 500m, memory: 1Gi}
                limits: {cpu: 2, memory: 2Gi, nvidia.com/gpu: 1}
    - name: worker
      replicas: 3
      minAvailable: 2
      maxRetry: 2
      template:
        spec:
          containers:
            - {name: main, image: python:3.11, resources: {requests: {cpu: 0.5}}}
"""

PATCH_FLOW = """\
apiVersion: flow.volcano.sh/v1alpha1
kind: JobFlow
metadata:
  name: patched
spec:
  jobRetainPolicy: retain
  flows:
    - name: prepare
    - name: train
      dependsOn:
        targets: [prepare]
        strategy: all
      patch:
        jobSpec:
          minAvailable: 2
          tasks:
            - name: worker
              replicas: 2
              template:
                spec:
                  containers:
                    - {name: main, command: [sh, -c, echo hi], imagePullPolicy: Always}
"""


#: The parsers the loader can be built on: libyaml's (the default, when PyYAML has it) and
#: the pure-Python fallback.
LOADER_BASES = [pytest.param(yaml.SafeLoader, id="pure-python")]
if yaml.__with_libyaml__:
    LOADER_BASES.insert(0, pytest.param(yaml.CSafeLoader, id="libyaml"))


@pytest.fixture(params=LOADER_BASES)
def loader_base(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> type[Any]:
    """Run the test with the loader built on each available parser."""
    base: type[Any] = request.param
    monkeypatch.setattr(loading, "KubeSafeLoader", yamlreader.kube_loader(base))
    return base


def only(text: str, source: str = "m.yaml") -> loading.Document:
    (doc,) = loading.parse_text(text, source)
    return doc


def typed(text: str, source: str = "m.yaml") -> Resource:
    obj, errors = loading.to_model(only(text, source))
    assert errors == [], [str(e) for e in errors]
    assert obj is not None
    return obj


def round_trip(doc: loading.Document) -> tuple[dict[str, Any], dict[str, Any]]:
    obj, errors = loading.to_model(doc)
    assert errors == [], [str(e) for e in errors]
    assert obj is not None
    return obj.to_dict(), doc.data


@pytest.mark.parametrize("path", MANIFESTS, ids=lambda p: str(p.relative_to(EXAMPLES)))
def test_examples_round_trip(path: Path) -> None:
    docs = loading.read_documents([str(path)])
    assert docs
    for doc in docs:
        dumped, original = round_trip(doc)
        assert dumped == original


def test_volcano_examples_load_as_their_kinds() -> None:
    folder = EXAMPLES / "jobflow"
    docs = loading.read_documents([str(folder / "JobFlow.yaml"), str(folder / "JobTemplate.yaml")])
    objs = [loading.to_model(d)[0] for d in docs]
    assert [type(o).__name__ for o in objs] == ["JobFlow"] + ["JobTemplate"] * 5
    assert [o.name for o in objs if o is not None] == ["test", "a", "b", "c", "d", "e"]


def test_rich_pod_template_round_trips_with_unknown_fields() -> None:
    doc = only(RICH_TEMPLATE)
    dumped, original = round_trip(doc)
    assert dumped == original
    template = typed(RICH_TEMPLATE)
    assert isinstance(template, JobTemplate) and template.spec is not None
    assert template.spec.model_extra == {"futureVolcanoField": {"enabled": True}}


def test_flow_with_patch_round_trips() -> None:
    dumped, original = round_trip(only(PATCH_FLOW))
    assert dumped == original


def test_patch_spec_alias_is_job_spec() -> None:
    text = PATCH_FLOW.replace("jobSpec:", "spec:")
    flow = typed(text)
    assert isinstance(flow, JobFlow)
    patch = flow.flows[1].patch
    assert patch is not None and patch.job_spec is not None
    assert patch.job_spec.min_available == 2
    assert (
        flow.to_dict()["spec"]["flows"][1]["patch"]
        == only(PATCH_FLOW).data["spec"]["flows"][1]["patch"]
    )


def test_patch_with_both_spellings_is_a_schema_error() -> None:
    text = PATCH_FLOW.replace(
        "        jobSpec:\n", "        spec: {minAvailable: 1}\n        jobSpec:\n"
    )
    obj, errors = loading.to_model(only(text))
    assert obj is None
    assert [str(e) for e in errors] == [
        "m.yaml:13: JobFlow default/patched: spec.flows[1].patch: "
        "give either patch.jobSpec or its alias patch.spec, not both"
    ]


def test_namespace_defaults_to_default_and_is_not_dumped() -> None:
    flow = typed("apiVersion: flow.volcano.sh/v1alpha1\nkind: JobFlow\nmetadata: {name: f}\n")
    assert flow.namespace == "default"
    assert flow.key == "default/f"
    assert "namespace" not in flow.to_dict()["metadata"]
    assert loading.identity({"metadata": {"name": "f"}}) == ("", "default", "f")
    assert loading.identity({"metadata": {"namespace": ""}}) == ("", "default", "")
    assert loading.identity({"kind": 3, "metadata": "x"}) == ("", "default", "")


def test_timestamps_stay_strings(loader_base: type[Any]) -> None:
    template = typed(RICH_TEMPLATE)
    assert template.metadata.creation_timestamp == "2024-01-01T00:00:00Z"
    assert template.metadata.labels["date"] == "2024-01-01"
    data = only("when: 2024-01-01\nat: 2024-01-01T10:00:00Z\n").data
    assert data == {"when": "2024-01-01", "at": "2024-01-01T10:00:00Z"}


def test_schema_errors_have_line_kind_name_and_path() -> None:
    text = (
        "apiVersion: flow.volcano.sh/v1alpha1\nkind: JobFlow\nmetadata:\n  name: f\n"
        "  namespace: ns\nspec:\n  flows:\n    - name: a\n    - name: b\n"
        "      dependsOn:\n        targets: b\n"
    )
    obj, errors = loading.to_model(only(text, "flow.yaml"))
    assert obj is None
    assert [str(e) for e in errors] == [
        'flow.yaml:11: JobFlow ns/f: spec.flows[1].dependsOn.targets: Invalid value: "b": '
        "must be of type array"
    ]
    (error,) = errors
    assert (error.origin.line, error.path, error.kind, error.namespace, error.name) == (
        11,
        "spec.flows[1].dependsOn.targets",
        "JobFlow",
        "ns",
        "f",
    )


@pytest.mark.parametrize(
    ("text", "message"),
    [
        pytest.param(
            "kind: JobFlow\n", "m.yaml:1: JobFlow: apiVersion: Required value", id="no-apiVersion"
        ),
        pytest.param(
            "apiVersion: flow.volcano.sh/v1alpha1\n", "object: kind: Required value", id="no-kind"
        ),
        pytest.param(
            "apiVersion: flow.volcano.sh/v1alpha1\nkind: JobFlow\nspec: {flows: [{}]}\n",
            "m.yaml:3: JobFlow: spec.flows[0].name: Required value",
            id="missing-field",
        ),
        pytest.param(
            "apiVersion: flow.volcano.sh/v1alpha1\nkind: JobFlow\nspec: {jobRetainPolicy: keep}\n",
            'spec.jobRetainPolicy: Unsupported value: "keep": supported values: "retain", "delete"',
            id="enum",
        ),
    ],
)
def test_schema_error_messages(text: str, message: str) -> None:
    obj, errors = loading.to_model(only(text))
    assert obj is None
    assert message in str(errors[0])


def test_multi_document_origins(loader_base: type[Any]) -> None:
    text = "a: 1\n---\n# comment\nb: 2\n---\n---\nc: 3\n"
    docs = loading.parse_text(text, "multi.yaml")
    assert [(d.origin.document, d.origin.line) for d in docs] == [(0, 1), (1, 4), (3, 7)]
    assert str(docs[1].origin) == "multi.yaml:4 (document 2)"


def test_line_of_nested_fields(loader_base: type[Any]) -> None:
    doc = only(PATCH_FLOW)
    assert doc.line_of(("spec", "flows", 1, "dependsOn", "targets", 0)) == 11
    assert doc.line_of(("spec", "flows", 1, "patch", "jobSpec", "tasks", 0, "replicas")) == 18
    assert doc.line_of(("spec", "flows", 7)) == 7  # deepest existing node: the `flows:` key


def test_json_documents_and_lines() -> None:
    data = yaml.safe_load(PATCH_FLOW)
    (doc,) = loading.parse_text(json.dumps(data, indent=2), "flow.json")
    assert doc.data == data
    assert str(doc.origin) == "flow.json:1"
    with pytest.raises(ParseError, match=r"^bad\.json:3: invalid JSON: "):
        loading.parse_text('{\n  "a": 1,\n  }\n', "bad.json")


def test_kind_list_items_are_objects_with_their_lines(loader_base: type[Any]) -> None:
    text = (
        "apiVersion: v1\nkind: List\nitems:\n"
        "- apiVersion: flow.volcano.sh/v1alpha1\n  kind: JobTemplate\n  metadata: {name: a}\n"
        "- apiVersion: flow.volcano.sh/v1alpha1\n  kind: JobFlow\n  metadata: {name: f}\n"
        "  spec: {flows: [{name: a, dependsOn: {targets: 7}}]}\n"
    )
    docs = loading.parse_text(text, "list.yaml")
    assert [d.data["kind"] for d in docs] == ["JobTemplate", "JobFlow"]
    assert [d.origin.line for d in docs] == [4, 7]
    obj, errors = loading.to_model(docs[1])
    assert obj is None
    assert str(errors[0]).startswith("list.yaml:10: JobFlow default/f: spec.flows[0].dependsOn")


@pytest.mark.parametrize("text", ["apiVersion: v1\nkind: List\n", "kind: List\nitems:\n"])
def test_a_kind_list_without_items_holds_no_object(text: str) -> None:
    """As kubectl reads it (it once said `no kind "List" in version "v1"`)."""
    assert loading.parse_text(text, "list.yaml") == []


def test_kind_list_in_json() -> None:
    items = [yaml.safe_load(PATCH_FLOW)]
    text = json.dumps({"apiVersion": "v1", "kind": "List", "items": items})
    (doc,) = loading.parse_text(text, "list.json")
    assert doc.data == items[0]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        pytest.param(
            "a: 1\na: 2\n",
            'x.yaml:2: invalid YAML: mapping key "a" already defined at line 1',
            id="duplicate-key",
        ),
        pytest.param("a: [\n", "x.yaml:2: invalid YAML: ", id="syntax"),
        pytest.param(
            "- a\n- b\n",
            "x.yaml:1: expected a Kubernetes object (a mapping), got a list",
            id="not-a-mapping",
        ),
        pytest.param(
            "kind: List\nitems: [3]\n",
            "x.yaml:1: items[0]: expected a Kubernetes object (a mapping), got a number",
            id="list-item-not-a-mapping",
        ),
        pytest.param(
            "apiVersion: v1\nkind: List\nitems: 5\n",
            "x.yaml:1: List: items: expected a list of objects, got a number",
            id="list-items-not-a-list",  # (was: no kind "List" in version "v1")
        ),
        pytest.param(
            '"a\\nb": 1\n"a\\nb": 2\n',
            'x.yaml:2: invalid YAML: mapping key "a b" already defined at line 1',
            id="duplicate-key-with-a-newline",
        ),
        pytest.param(
            "a: \x01\n",
            "x.yaml:1: invalid YAML: unacceptable character #x0001: "
            "special characters are not allowed",
            id="control-character",
        ),
        pytest.param(
            "a: 1\n---\nb: 2\nc: \ud800\n",
            "x.yaml:4: invalid YAML: unacceptable character #xd800",
            id="lone-surrogate-in-a-later-document",
        ),
        pytest.param(
            "a: " + "[" * 5000, "x.yaml: invalid YAML: nested too deeply", id="deep-nesting"
        ),
        pytest.param(
            "a:\n" + "".join(" " * i + "b:\n" for i in range(1, 950)),
            "x.yaml: invalid YAML: nested too deeply",
            id="deep-block-nesting",
        ),
    ],
)
def test_parse_errors(loader_base: type[Any], text: str, message: str) -> None:
    with pytest.raises(ParseError) as info:
        loading.parse_text(text, "x.yaml")
    assert str(info.value).startswith(message)
    assert "\n" not in str(info.value)


def test_read_documents_from_stdin() -> None:
    docs = loading.read_documents(["-"], stdin=io.StringIO(PATCH_FLOW))  # type: ignore[arg-type]
    assert [str(d.origin) for d in docs] == ["<stdin>:1"]


def test_stdin_that_is_not_utf8_is_said_so_as_a_file_is(monkeypatch: pytest.MonkeyPatch) -> None:
    """Under a C locale sys.stdin reads an undecodable byte as a lone surrogate: the error
    was `invalid YAML: unacceptable character #xdce9: special characters are not allowed`."""
    raw = io.BytesIO(b"name: caf\xe9\n")
    wrapper = io.TextIOWrapper(raw, encoding="utf-8", errors="surrogateescape")
    monkeypatch.setattr(sys, "stdin", wrapper)
    with pytest.raises(ParseError) as info:
        loading.read_documents(["-"])
    assert str(info.value) == "<stdin>: not UTF-8 text (invalid continuation byte)"


def test_a_closed_stdin_is_said_so(monkeypatch: pytest.MonkeyPatch) -> None:
    """`vcflow apply -f - <&-`: Python's sys.stdin is None (it was an internal error)."""
    monkeypatch.setattr(sys, "stdin", None)
    with pytest.raises(ParseError) as info:
        loading.read_documents(["-"])
    assert str(info.value) == "<stdin>: stdin is closed: nothing to read"


@pytest.mark.parametrize("name", ["flow.json", "flow.yaml"])
def test_a_byte_order_mark_is_skipped_in_json_as_in_yaml(tmp_path: Path, name: str) -> None:
    """Windows editors write one; JSON said `Unexpected UTF-8 BOM (decode using utf-8-sig)`."""
    path = tmp_path / name
    body = json.dumps(yaml.safe_load(PATCH_FLOW), indent=1)
    path.write_bytes(b"\xef\xbb\xbf" + body.encode())
    (doc,) = loading.read_documents([str(path)])
    assert doc.data == yaml.safe_load(PATCH_FLOW)
    assert str(doc.origin) == f"{path}:1"


def test_read_documents_of_a_file_that_is_not_utf8(tmp_path: Path) -> None:
    path = tmp_path / "latin1.yaml"
    path.write_bytes(b"name: caf\xe9\n")
    with pytest.raises(ParseError, match=r"latin1\.yaml: not UTF-8 text"):
        loading.read_documents([str(path)])


def test_expand_paths(tmp_path: Path) -> None:
    for name in ("b.yaml", "a.json", "c.yml", ".hidden.yaml", "notes.txt"):
        (tmp_path / name).write_text("{}")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "d.yaml").write_text("{}")
    found = loading.expand_paths([str(tmp_path), "-"])
    assert found == [str(tmp_path / n) for n in ("a.json", "b.yaml", "c.yml")] + ["-"]
    with pytest.raises(ParseError, match="no such file or directory"):
        loading.expand_paths([str(tmp_path / "missing.yaml")])
    with pytest.raises(ParseError, match="no such file"):
        loading.expand_paths([str(tmp_path / "sub" / "nothing-here")])
    (tmp_path / "empty").mkdir()
    assert loading.expand_paths([str(tmp_path / "empty")]) == []  # no objects, as kubectl


def test_format_path() -> None:
    assert modelerrors.format_path(("spec", "flows", 2, "dependsOn", "targets", 0)) == (
        "spec.flows[2].dependsOn.targets[0]"
    )
    assert modelerrors.format_path(()) == ""


def test_dump_yaml_round_trips_and_keeps_order() -> None:
    data = only(RICH_TEMPLATE).data
    text = loading.dump_yaml(data)
    assert text.startswith("apiVersion: flow.volcano.sh/v1alpha1\nkind: JobTemplate\n")
    assert only(text).data == data


def test_lenient_reading_goes_on_after_a_document_that_is_not_an_object(
    loader_base: type[Any], tmp_path: Path
) -> None:
    path = tmp_path / "m.yaml"
    path.write_text(
        "apiVersion: v1\nkind: A\n---\n- a list\n---\napiVersion: v1\nkind: B\n",
        encoding="utf-8",
    )
    items = loading.read_file_lenient(str(path))
    assert [type(i).__name__ for i in items] == ["Document", "ParseError", "Document"]
    assert str(items[1]).endswith(
        "(document 2): expected a Kubernetes object (a mapping), got a list"
    )


@pytest.mark.skipif(not yaml.__with_libyaml__, reason="PyYAML is built without libyaml")
@pytest.mark.optimisation
def test_loader_parses_with_libyaml_when_pyyaml_has_it() -> None:
    assert issubclass(loading.KubeSafeLoader, yaml.CSafeLoader)
    assert not issubclass(loading.KubeSafeLoader, yaml.SafeLoader)
    doc = only("when: 2024-01-01\nspec: {a: [1]}\n")
    assert doc.data == {"when": "2024-01-01", "spec": {"a": [1]}}
    assert doc.node is not None
    assert type(doc.node.start_mark).__module__ == "yaml._yaml"  # composed by libyaml


def test_loader_falls_back_to_the_pure_python_parser() -> None:
    loader = yamlreader.kube_loader(yaml.SafeLoader)
    assert issubclass(loader, yaml.SafeLoader)
    if yaml.__with_libyaml__:
        assert not issubclass(loader, yaml.CSafeLoader)
    assert loader("t: 2024-01-01T00:00:00Z\n").get_single_data() == {"t": "2024-01-01T00:00:00Z"}


@pytest.mark.parametrize(
    ("text", "where", "context"),
    [
        pytest.param(
            "apiVersion: v1\nkind: A\nmetadata: {name: a\nspec: {}\n",
            ":4: invalid YAML: ",
            "(while parsing a flow mapping at line 3, column 11)",
            id="unclosed-flow-mapping",
        ),
        pytest.param(
            "a: 'x\n\n\n",
            ":4: invalid YAML: found unexpected end of stream ",
            "(while scanning a quoted scalar at line 1, column 4)",
            id="unclosed-quote",
        ),
        pytest.param(
            "kind: A\n---\n- a\nb: c\n",
            ":4 (document 2): invalid YAML: ",
            "(while parsing a block collection at line 3, column 1)",
            id="second-document",
        ),
        pytest.param(
            "kind: A\nmetadata:\n  name: a\n   labels: x\n",
            ":4: invalid YAML: mapping values are not allowed ",
            "",
            id="bad-indentation",
        ),
    ],
)
def test_yaml_syntax_error_is_one_line_with_file_and_line(
    loader_base: type[Any], tmp_path: Path, text: str, where: str, context: str
) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ParseError) as info:
        loading.read_documents([str(path)])
    message = str(info.value)
    assert "\n" not in message
    assert message.startswith(f"{path}{where}")
    assert message.endswith(context)
    errors = [i for i in loading.read_file_lenient(str(path)) if isinstance(i, ParseError)]
    assert [str(e) for e in errors] == [message]


@pytest.mark.parametrize("base", LOADER_BASES)
@settings(max_examples=150, deadline=None)
@given(
    text=st.text(alphabet=st.sampled_from(list("{}[]:,-'\"#&*!|>?%@` \n\r\t\x01ab01")), max_size=60)
)
def test_every_yaml_error_is_one_line_naming_the_file(base: type[Any], text: str) -> None:
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(loading, "KubeSafeLoader", yamlreader.kube_loader(base))
        items = loading.read_file_lenient("-", stdin=io.StringIO(text))  # type: ignore[arg-type]
    for item in items:
        if isinstance(item, ParseError):
            message = str(item)
            assert message.startswith("<stdin>"), message
            assert "\n" not in message and "\r" not in message, message


NULLS_TEMPLATE = """\
apiVersion: flow.volcano.sh/v1alpha1
kind: JobTemplate
metadata: {name: a}
spec:
  queue: null
  priorityClassName: null
  tasks:
    - name: t
      replicas: 1
      minAvailable: null
      template:
        metadata: null
        spec:
          priorityClassName: null
          nodeSelector: null
          containers:
            - name: c
              image: x
              args: null
              env: [{name: A, value: null}]
              resources: {limits: null}
"""


def test_nulls_in_a_job_spec_are_absent_fields() -> None:
    """As in Kubernetes, where the API server prunes them: nothing of them is kept or shown."""
    (doc,) = loading.parse_text(NULLS_TEMPLATE, "t.yaml")
    obj, errors = loading.to_model(doc)
    assert errors == [] and obj is not None
    assert obj.to_dict()["spec"] == {
        "tasks": [
            {
                "name": "t",
                "replicas": 1,
                "template": {
                    "spec": {
                        "containers": [
                            {"name": "c", "image": "x", "env": [{"name": "A"}], "resources": {}}
                        ]
                    }
                },
            }
        ]
    }


def test_nulls_in_a_flow_patch_stay_they_delete() -> None:
    text = (
        "apiVersion: flow.volcano.sh/v1alpha1\nkind: JobFlow\nmetadata: {name: f}\n"
        "spec: {flows: [{name: a, patch: {jobSpec: {queue: null}}}]}\n"
    )
    (doc,) = loading.parse_text(text, "f.yaml")
    obj, _ = loading.to_model(doc)
    assert obj is not None
    assert obj.to_dict()["spec"]["flows"][0]["patch"] == {"jobSpec": {"queue": None}}
