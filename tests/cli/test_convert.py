"""`vcflow convert`: every Volcano example vcjob (and JobTemplate) both ways, losslessly; a
vcjob as `vcflow get -o yaml` prints it becomes a clean template; errors are one line, exit 1
(2 for usage), and nothing is printed."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import Result

from vcflow.reconcile import convert

Vc = Callable[..., Result]
Phase = Callable[[str, str], Result]

VOLCANO = Path(__file__).resolve().parents[1] / "data" / "volcano" / "example"
FILES = sorted(VOLCANO.rglob("*.yaml"))
COMPARED = ("apiVersion", "kind", "spec")
COMPARED_META = ("name", "namespace", "labels", "annotations")


def documents(path: Path, kind: str) -> list[tuple[str, dict[str, Any]]]:
    """(id, document) of each object of `kind` in `path`."""
    docs = [d for d in yaml.safe_load_all(path.read_text()) if d and d.get("kind") == kind]
    return [(f"{path.relative_to(VOLCANO)}[{i}]", d) for i, d in enumerate(docs)]


VCJOBS = [doc for path in FILES for doc in documents(path, "Job")]
TEMPLATES = [doc for path in FILES for doc in documents(path, "JobTemplate")]


def test_every_volcano_example_vcjob_is_here() -> None:
    """The copies hold Volcano's 24 example vcjobs and its 5 templates (tests/data/volcano)."""
    assert len(VCJOBS) == 24
    assert len(TEMPLATES) == 5
    assert all(d["apiVersion"] == "batch.volcano.sh/v1alpha1" for _, d in VCJOBS)


def converted(vc: Vc, tmp_path: Path, data: dict[str, Any], to: str, *extra: str) -> Any:
    """`vcflow convert -f FILE --to TO` of `data` written to a file; the parsed output."""
    path = tmp_path / f"in-{to}.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    result = vc("convert", "-f", path, "--to", to, *extra)
    assert result.exit_code == 0, result.output + result.stderr
    assert result.stderr == ""
    return yaml.safe_load(result.stdout)


def same(a: dict[str, Any], b: dict[str, Any]) -> None:
    """apiVersion, kind, metadata's name/namespace/labels/annotations and spec are equal."""
    assert {k: a.get(k) for k in COMPARED} == {k: b.get(k) for k in COMPARED}
    meta_a, meta_b = a.get("metadata") or {}, b.get("metadata") or {}
    assert {k: meta_a.get(k) for k in COMPARED_META} == {k: meta_b.get(k) for k in COMPARED_META}


@pytest.mark.parametrize("job", [d for _, d in VCJOBS], ids=[i for i, _ in VCJOBS])
def test_vcjob_to_template_and_back_is_lossless(
    vc: Vc, tmp_path: Path, job: dict[str, Any]
) -> None:
    template = converted(vc, tmp_path, job, "jobtemplate")
    assert template["apiVersion"] == "flow.volcano.sh/v1alpha1"
    assert template["kind"] == "JobTemplate"
    assert template["spec"] == job["spec"]
    back = converted(vc, tmp_path, template, "vcjob")
    same(back, job)
    assert back == job  # the whole document, not only the compared fields


@pytest.mark.parametrize("template", [d for _, d in TEMPLATES], ids=[i for i, _ in TEMPLATES])
def test_template_to_vcjob_and_back_is_lossless(
    vc: Vc, tmp_path: Path, template: dict[str, Any]
) -> None:
    job = converted(vc, tmp_path, template, "vj")
    assert (job["apiVersion"], job["kind"]) == ("batch.volcano.sh/v1alpha1", "Job")
    assert job["metadata"]["name"] == template["metadata"]["name"]
    assert converted(vc, tmp_path, job, "jt") == template


def test_several_documents_in_several_out_in_order(vc: Vc) -> None:
    path = VOLCANO / "hierarchical-jobs" / "jobs.yaml"
    result = vc("convert", "-f", path, "--to", "jobtemplate")
    assert result.exit_code == 0, result.stderr
    out = list(yaml.safe_load_all(result.stdout))
    assert [d["metadata"]["name"] for d in out] == [
        d["metadata"]["name"] for _, d in documents(path, "Job")
    ]
    assert {d["kind"] for d in out} == {"JobTemplate"}


def test_json_of_one_object_and_a_list_of_several(vc: Vc) -> None:
    one = vc("convert", "-f", VOLCANO / "job.yaml", "--to", "jt", "-o", "json")
    assert json.loads(one.stdout)["kind"] == "JobTemplate"
    several = vc(
        "convert", "-f", VOLCANO / "jobflow" / "JobTemplate.yaml", "--to", "vcjob", "-o", "json"
    )
    listed = json.loads(several.stdout)
    assert listed["kind"] == "List"
    assert [i["metadata"]["name"] for i in listed["items"]] == list("abcde")


def test_name_renames_the_object_made(vc: Vc, tmp_path: Path) -> None:
    template = TEMPLATES[0][1]
    job = converted(vc, tmp_path, template, "vcjob", "--name", "a-now")
    assert job["metadata"]["name"] == "a-now"
    assert job["spec"] == template["spec"]


def test_a_vcjob_from_get_becomes_a_clean_template(
    vc: Vc, example: Result, set_phase: Phase, tmp_path: Path
) -> None:
    """`vcflow get vcjob NAME -o yaml | vcflow convert -f - --to jobtemplate`: no status,
    generated metadata or stamps; the spec whole; the template applies."""
    set_phase("test-a", "Running")
    vc("patch", "vcjob", "test-a", "--type", "merge", "-p", '{"metadata":{"labels":{"team":"x"}}}')
    got = vc("get", "vcjob", "test-a", "-o", "yaml")
    live = yaml.safe_load(got.stdout)
    assert live["status"]["state"]["phase"] == "Running"
    assert "volcano.sh/createdByJobFlow" in live["metadata"]["labels"]
    result = vc("convert", "-f", "-", "--to", "jobtemplate", "--name", "a2", input=got.stdout)
    assert result.exit_code == 0, result.stderr
    template = yaml.safe_load(result.stdout)
    assert template == {
        "apiVersion": "flow.volcano.sh/v1alpha1",
        "kind": "JobTemplate",
        "metadata": {"name": "a2", "namespace": "default", "labels": {"team": "x"}},
        "spec": live["spec"],
    }
    path = tmp_path / "a2.yaml"
    path.write_text(result.stdout)
    applied = vc("apply", "-f", path)
    assert applied.exit_code == 0, applied.stderr
    assert applied.stdout == "jobtemplate.flow.volcano.sh/a2 created\n"


def test_a_list_from_get_gives_a_template_per_vcjob(
    vc: Vc, example: Result, set_phase: Phase
) -> None:
    set_phase("test-a", "Completed")  # the controllers then create test-b
    got = vc("get", "vcjob", "-o", "yaml")
    assert yaml.safe_load(got.stdout)["kind"] == "List"
    result = vc("convert", "-f", "-", "--to", "jt", input=got.stdout)
    assert result.exit_code == 0, result.stderr
    made = list(yaml.safe_load_all(result.stdout))
    assert [(t["kind"], t["metadata"]["name"]) for t in made] == [
        ("JobTemplate", "test-a"),
        ("JobTemplate", "test-b"),
    ]
    assert all(set(t) == {"apiVersion", "kind", "metadata", "spec"} for t in made)


def test_a_vcjob_from_a_cluster_keeps_only_what_the_user_wrote(vc: Vc, tmp_path: Path) -> None:
    job = dict(VCJOBS[0][1])
    stamped = {key: "x" for key in convert.CONTROLLER_ANNOTATIONS}
    job["metadata"] = {
        **job["metadata"],
        "namespace": "team",
        "labels": {"app": "web", **{key: "team.a" for key in convert.CONTROLLER_LABELS}},
        "annotations": {"note": "mine", **stamped},
        "uid": "0b5c",
        "resourceVersion": "12345",
        "generation": 2,
        "creationTimestamp": "2026-12-01T10:00:00Z",
        "managedFields": [{"manager": "vc-controller-manager", "operation": "Update"}],
        "ownerReferences": [
            {
                "apiVersion": "flow.volcano.sh/v1alpha1",
                "kind": "JobFlow",
                "name": "f",
                "uid": "1",
                "controller": True,
            }
        ],
    }
    job["status"] = {"state": {"phase": "Completed"}, "succeeded": 6, "version": 1}
    template = converted(vc, tmp_path, job, "jobtemplate")
    assert template["metadata"] == {
        "name": job["metadata"]["name"],
        "namespace": "team",
        "labels": {"app": "web"},
        "annotations": {"note": "mine"},
    }
    assert "status" not in template
    assert template["spec"] == job["spec"]


def one_line(result: Result, code: int = 1) -> str:
    assert result.exit_code == code, result.output + result.stderr
    assert "Traceback" not in result.output + result.stderr
    assert "internal error" not in result.stderr
    assert result.stdout == ""  # nothing written
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, lines
    return lines[0]


def test_a_kind_to_itself_names_file_document_and_kind(vc: Vc, tmp_path: Path) -> None:
    path = tmp_path / "mixed.yaml"
    path.write_text((VOLCANO / "job.yaml").read_text() + "---\n" + TEMPLATE_TEXT)
    line = one_line(vc("convert", "-f", path, "--to", "jobtemplate"))
    assert line == (
        f"{path}:44 (document 2): JobTemplate default/t: already a JobTemplate "
        "(flow.volcano.sh/v1alpha1 JobTemplate): nothing to convert"
    )


TEMPLATE_TEXT = """apiVersion: flow.volcano.sh/v1alpha1
kind: JobTemplate
metadata: {name: t}
spec: {minAvailable: 1}
"""


def test_an_unsupported_kind(vc: Vc) -> None:
    line = one_line(vc("convert", "-f", VOLCANO / "jobflow" / "JobFlow.yaml", "--to", "vcjob"))
    assert line.endswith(
        "JobFlow.yaml:1: JobFlow default/test: cannot convert JobFlow (flow.volcano.sh/v1alpha1) "
        "to vcjob: --to vcjob takes a JobTemplate (flow.volcano.sh/v1alpha1 JobTemplate)"
    )


def test_a_schema_error_is_one_line_at_its_field(vc: Vc, tmp_path: Path) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(
        "apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nmetadata: {name: j}\n"
        "spec:\n  minAvailable: many\n"
    )
    line = one_line(vc("convert", "-f", path, "--to", "jt"))
    assert line.startswith(f"{path}:5: Job default/j: spec.minAvailable: ")


def test_a_name_is_required(vc: Vc) -> None:
    text = "apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nspec: {}\n"
    line = one_line(vc("convert", "-f", "-", "--to", "jt", input=text))
    assert line == "<stdin>:1: Job: metadata.name: Required value (or give one with --name)"
    made = vc("convert", "-f", "-", "--to", "jt", "--name", "given", input=text)
    assert yaml.safe_load(made.stdout)["metadata"] == {"name": "given"}


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["--to", "jobflow"], 'cannot convert to "jobflow": use jobtemplate (jt) or vcjob (vj)'),
        (["--to", "nothing"], 'cannot convert to "nothing"'),
        (["--to", "jt", "-o", "wide"], 'unknown output format "wide": use yaml or json'),
        (["--to", "jt", "--name", "Not_A_Name"], "lowercase RFC 1123 subdomain"),
        ([], "Missing option '--to'"),
    ],
)
def test_usage_errors_exit_2(vc: Vc, args: list[str], words: str) -> None:
    result = vc("convert", "-f", VOLCANO / "job.yaml", *args)
    assert result.exit_code == 2, result.output
    assert words in result.stderr
    assert result.stdout == ""


def test_name_with_several_objects_is_a_usage_error(vc: Vc) -> None:
    path = VOLCANO / "hierarchical-jobs" / "jobs.yaml"
    result = vc("convert", "-f", path, "--to", "jt", "--name", "x")
    assert result.exit_code == 2
    assert "names one object, and the input holds 4" in result.stderr
    assert result.stdout == ""


def test_no_objects_and_no_file(vc: Vc, tmp_path: Path) -> None:
    assert one_line(vc("convert", "-f", "-", "--to", "jt", input="---\n")) == (
        "error: no objects passed to convert"
    )
    missing = tmp_path / "missing.yaml"
    assert one_line(vc("convert", "-f", missing, "--to", "jt")) == (
        f"{missing}: no such file or directory"
    )
