"""Names, label and annotation keys and values, as Kubernetes validates them: whole-value
matches (a trailing newline passed every check while they used Python's `$`), qualified keys
with DNS subdomain prefixes, label values of at most 63 characters, annotations of at most
256 KiB together — on an object's metadata and on a task's pod template."""

from __future__ import annotations

from typing import Any

import pytest

from vcflow.admission.review import errors_only, review
from vcflow.api import names
from vcflow.api.jobtemplate import JobTemplate
from vcflow.api.vcjob import VCJob


def template(
    meta: dict[str, Any] | None = None,
    pod_meta: dict[str, Any] | None = None,
    task_name: str = "main",
    container: str = "c",
) -> JobTemplate:
    pod: dict[str, Any] = {
        "spec": {
            "restartPolicy": "Never",
            "containers": [{"name": container, "image": "busybox", "command": ["true"]}],
        }
    }
    if pod_meta is not None:
        pod["metadata"] = pod_meta
    return JobTemplate.from_dict(
        {
            "apiVersion": "flow.volcano.sh/v1alpha1",
            "kind": "JobTemplate",
            "metadata": {"name": "t", **(meta or {})},
            "spec": {
                "minAvailable": 1,
                "tasks": [{"name": task_name, "replicas": 1, "template": pod}],
            },
        }
    )


def paths(obj: JobTemplate | VCJob) -> list[str]:
    return [e.path for e in errors_only(review(obj))]


@pytest.mark.parametrize(
    ("obj", "path"),
    [
        (template({"name": "t\n"}), "metadata.name"),
        (template({"namespace": "ns\n"}), "metadata.namespace"),
        (template(task_name="main\n"), "spec.tasks[0].name"),
        (template(container="c\n"), "spec.tasks[0].template.spec.containers[0].name"),
        (template({"labels": {"app": "web\n"}}), "metadata.labels[app]"),
        (template({"labels": {"app\n": "web"}}), "metadata.labels[app\n]"),
    ],
    ids=["name", "namespace", "task", "container", "label-value", "label-key"],
)
def test_a_trailing_newline_is_refused_everywhere(obj: JobTemplate, path: str) -> None:
    assert path in paths(obj)


@pytest.mark.parametrize(
    "key",
    ["app", "app.kubernetes.io/name", "example.com/My_Name-1", "a" * 63, f"{'a' * 253}/x"],
)
def test_valid_label_keys_pass(key: str) -> None:
    assert paths(template({"labels": {key: "v"}, "annotations": {key: "v"}})) == []


@pytest.mark.parametrize(
    ("key", "problem"),
    [
        ("", "name part must be non-empty"),
        ("/name", "prefix part must be non-empty"),
        ("Example.com/name", "prefix part a lowercase RFC 1123 subdomain"),
        ("a/b/c", "a qualified name must consist of"),
        ("-app", "name part must consist of"),
        ("a" * 64, "name part must be no more than 63 characters"),
        (f"{'a' * 254}/x", "prefix part must be no more than 253 characters"),
        ("bad key", "name part must consist of"),
    ],
)
def test_label_keys_are_qualified_names(key: str, problem: str) -> None:
    found = errors_only(review(template({"labels": {key: "v"}})))
    assert [e.path for e in found] == [f"metadata.labels[{key}]"] * len(found)
    assert any(problem in e.message for e in found), [e.message for e in found]


def test_label_values_have_kubernetes_limits() -> None:
    assert paths(template({"labels": {"a": "v" * 64}})) == ["metadata.labels[a]"]
    assert paths(template({"labels": {"a": ""}})) == []


def test_annotation_keys_are_checked_lower_cased_and_values_are_free() -> None:
    ok = {"Example.COM/Key": "any value, even\nlines \x1b and all"}
    assert paths(template({"annotations": ok})) == []
    assert paths(template({"annotations": {"a b": "v"}})) == ["metadata.annotations[a b]"]


def test_annotations_are_at_most_256_kib_together() -> None:
    half = "x" * (names.ANNOTATIONS_MAX // 2)
    assert paths(template({"annotations": {"a": half}})) == []
    found = errors_only(review(template({"annotations": {"a": half, "b": half}})))
    assert [e.path for e in found] == ["metadata.annotations"]
    assert found[0].message.startswith("Too long: must have at most 262144 bytes")


def test_a_pod_templates_labels_and_annotations_are_checked_too() -> None:
    at = "spec.tasks[0].template.metadata"
    bad = {"labels": {"app": "web\n", "-k": "v"}, "annotations": {"a/b/c": "v"}}
    assert sorted(paths(template(pod_meta=bad))) == [
        f"{at}.annotations[a/b/c]",
        f"{at}.labels[-k]",
        f"{at}.labels[app]",
    ]


def test_an_error_about_a_value_shows_its_control_characters_escaped() -> None:
    found = errors_only(review(template({"labels": {"app": "\x1b]0;x\x07"}})))
    assert "\x1b" not in str(found[0]) and "\\x1b]0;x\\x07" in str(found[0])
