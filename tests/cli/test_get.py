"""`vcflow get`: kubectl's columns per kind, -A, -o wide|yaml|json|name, kind spellings,
NotFound and empty results, ages."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml
from typer.testing import Result

from vcflow.api import ages

Vc = Callable[..., Result]
Rows = Callable[[str], list[dict[str, str]]]
Phase = Callable[[str, str], Result]
Write = Callable[..., Path]

OTHER_NS = """apiVersion: flow.volcano.sh/v1alpha1
kind: JobTemplate
metadata: {name: a, namespace: team}
spec:
  tasks:
    - {name: t, replicas: 1, template: {spec: {containers: [{name: c, image: busybox}]}}}
"""


def headers(text: str) -> list[str]:
    return text.splitlines()[0].split()


def test_columns_per_kind(example: Result, vc: Vc, set_phase: Phase, rows: Rows) -> None:
    set_phase("test-a", "Running")
    assert headers(vc("get", "jf").stdout) == ["NAME", "STATUS", "AGE"]
    assert headers(vc("get", "jt").stdout) == ["NAME", "AGE"]
    vcjobs = vc("get", "vj").stdout
    assert headers(vcjobs) == ["NAME", "STATUS", "MINAVAILABLE", "RUNNINGS", "AGE"]
    assert rows(vcjobs)[0]["STATUS"] == "Running"
    assert rows(vc("get", "jf").stdout)[0]["STATUS"] == "Running"


def test_table_style_is_kubectl_plain(example: Result, vc: Vc) -> None:
    lines = vc("get", "jt").stdout.splitlines()
    assert lines[0] == "NAME   AGE"
    assert all(line == line.rstrip() for line in lines)
    assert lines[1].startswith("a      ")


def test_wide_adds_jobs_and_queue(example: Result, vc: Vc, set_phase: Phase, rows: Rows) -> None:
    set_phase("test-a", "Completed")
    flows = vc("get", "jf", "-o", "wide").stdout
    assert headers(flows) == ["NAME", "STATUS", "AGE", "JOBS", "ETA"]
    assert rows(flows)[0]["JOBS"] == "1/5"
    assert rows(flows)[0]["ETA"] == "<unknown>"  # (no estimates: Volcano's example has none)
    jobs = vc("get", "vcjobs", "-o", "wide").stdout
    assert headers(jobs)[-1] == "QUEUE"
    assert {r["QUEUE"] for r in rows(jobs)} == {"default"}


def test_all_namespaces(example: Result, vc: Vc, write_manifest: Write, rows: Rows) -> None:
    vc("apply", "-f", write_manifest(OTHER_NS))
    assert [r["NAME"] for r in rows(vc("get", "jt", "-n", "team").stdout)] == ["a"]
    found = rows(vc("get", "jt", "-A").stdout)
    assert [(r["NAMESPACE"], r["NAME"]) for r in found][:2] == [("default", "a"), ("default", "b")]
    assert ("team", "a") in [(r["NAMESPACE"], r["NAME"]) for r in found]


def test_nothing_found_is_stderr_and_exit_0(vc: Vc) -> None:
    result = vc("get", "jf")
    assert (result.exit_code, result.stdout) == (0, "")
    assert result.stderr == "No resources found in default namespace.\n"
    assert vc("get", "jf", "-A").stderr == "No resources found.\n"
    assert vc("get", "jf", "-n", "x").stderr == "No resources found in x namespace.\n"


def test_reading_creates_no_state(vc: Vc, state_dir: Path) -> None:
    vc("get", "jf")
    vc("describe", "jf")
    assert not state_dir.exists()


CHANGES = [
    ("stop", "jobflow", "x"),
    ("retry", "jobflow", "x"),
    ("resubmit", "jobflow", "x"),
    ("delete", "jf", "x"),
    ("patch", "jf", "x", "-p", "{}"),
    ("suspend", "vcjob", "x"),
    ("terminate", "vcjob", "x"),
]


@pytest.mark.parametrize("argv", CHANGES, ids=[" ".join(a[:2]) for a in CHANGES])
def test_a_change_of_what_is_not_there_creates_no_state(
    vc: Vc, state_dir: Path, argv: tuple[str, ...]
) -> None:
    """A command that changes an object (not apply, which creates) finds none where no
    store is, says so as against a store, and makes no state directory (a typo'd name or
    --state-dir would leave one)."""
    result = vc(*argv)
    assert result.exit_code == 1, result.output
    assert result.stderr.startswith("Error from server (NotFound): ")
    assert result.stderr.endswith(' "x" not found\n')
    assert not state_dir.exists()


def test_unknown_name_is_one_line_after_the_found(example: Result, vc: Vc, rows: Rows) -> None:
    result = vc("get", "jf", "test", "nope")
    assert result.exit_code == 1
    assert [r["NAME"] for r in rows(result.stdout)] == ["test"]
    assert result.stderr == (
        'Error from server (NotFound): jobflows.flow.volcano.sh "nope" not found\n'
    )


def test_yaml_of_one_object_and_of_a_list(example: Result, vc: Vc) -> None:
    one = yaml.safe_load(vc("get", "jf", "test", "-o", "yaml").stdout)
    assert (one["kind"], one["metadata"]["name"]) == ("JobFlow", "test")
    assert one["status"]["state"]["phase"] == "Pending"
    many = yaml.safe_load(vc("get", "jt", "-o", "yaml").stdout)
    assert (many["apiVersion"], many["kind"]) == ("v1", "List")
    assert [item["metadata"]["name"] for item in many["items"]] == list("abcde")


def test_json(example: Result, vc: Vc) -> None:
    one = json.loads(vc("get", "vj", "test-a", "-o", "json").stdout)
    assert one["metadata"]["ownerReferences"][0]["kind"] == "JobFlow"
    listed = json.loads(vc("get", "vj", "-o", "json").stdout)
    assert [item["metadata"]["name"] for item in listed["items"]] == ["test-a"]


def test_empty_list_in_yaml_and_nothing_in_name(vc: Vc) -> None:
    assert yaml.safe_load(vc("get", "jf", "-o", "yaml").stdout)["items"] == []
    named = vc("get", "jf", "-o", "name")
    assert (named.exit_code, named.stdout, named.stderr) == (0, "", "")


def test_name_output(example: Result, vc: Vc) -> None:
    assert vc("get", "jf", "-o", "name").stdout == "jobflow.flow.volcano.sh/test\n"
    assert vc("get", "vj", "-o", "name").stdout == "job.batch.volcano.sh/test-a\n"
    assert vc("get", "jt", "a", "b", "-o", "name").stdout.splitlines() == [
        "jobtemplate.flow.volcano.sh/a",
        "jobtemplate.flow.volcano.sh/b",
    ]


@pytest.mark.parametrize(
    ("spelling", "expected"),
    [
        *[(s, "jobflow") for s in ("jf", "jobflow", "jobflows", "JobFlow", "jobflows.flow")],
        ("jobflows.flow.volcano.sh", "jobflow"),
        *[(s, "jobtemplate") for s in ("jt", "jobtemplate", "jobtemplates")],
        ("jobtemplate.flow.volcano.sh", "jobtemplate"),
        *[(s, "job") for s in ("vcjob", "vcjobs", "vj", "job", "jobs", "jobs.batch.volcano.sh")],
    ],
)
def test_kind_spellings(example: Result, vc: Vc, spelling: str, expected: str) -> None:
    result = vc("get", spelling, "-o", "name")
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith(f"{expected}.")


@pytest.mark.parametrize(
    "args",
    [
        pytest.param(["get", "deployments"], id="unknown-kind"),
        pytest.param(["describe", "flows", "x"], id="unknown-kind-describe"),
        pytest.param(["get", "jf", "-o", "table"], id="unknown-output"),
        pytest.param(["get", "jf", "test", "-A"], id="name-with-all-namespaces"),
        pytest.param(["get"], id="no-kind"),
    ],
)
def test_usage_errors_exit_2(vc: Vc, args: list[str]) -> None:
    result = vc(*args)
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output


def test_unknown_kind_lists_the_kinds(vc: Vc) -> None:
    message = " ".join(vc("get", "deployments").stderr.split())
    assert 'unknown kind "deployments"' in message
    assert all(word in message for word in ("jobflow (jf)", "jobtemplate (jt)", "vcjob (vj"))


@pytest.mark.parametrize(
    ("seconds", "expected"),
    [
        (-5, "<invalid>"),
        (-1, "0s"),
        (0, "0s"),
        (119, "119s"),
        (120, "2m"),
        (185, "3m5s"),
        (600, "10m"),
        (179 * 60, "179m"),
        (3 * 3600, "3h"),
        (5 * 3600 + 7 * 60, "5h7m"),
        (9 * 3600, "9h"),
        (47 * 3600, "47h"),
        (2 * 86400, "2d"),
        (3 * 86400 + 4 * 3600, "3d4h"),
        (30 * 86400, "30d"),
        (800 * 86400, "2y70d"),
        (9 * 365 * 86400, "9y"),
    ],
)
def test_age_is_kubectl_human_duration(seconds: int, expected: str) -> None:
    assert ages.human_duration(seconds) == expected


def test_age_of_missing_timestamp() -> None:
    from datetime import UTC, datetime

    assert ages.age(None, datetime.now(UTC)) == "<unknown>"
    assert ages.age("garbage", datetime.now(UTC)) == "<unknown>"
