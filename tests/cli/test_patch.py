"""`vcflow patch`: JSON merge patch (RFC 7386) of objects and of their status; driving the
example flow to Succeed by setting vcjob phases, as a person or script would."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from typer.testing import Result

from vcflow.patch.jsonmerge import merge_patch

Vc = Callable[..., Result]
Rows = Callable[[str], list[dict[str, str]]]
Phase = Callable[[str, str], Result]
COMPLETED = '{"status":{"state":{"phase":"Completed"}}}'


def names(vc: Vc, rows: Rows, kind: str) -> list[str]:
    return [r["NAME"] for r in rows(vc("get", kind).stdout)]


def test_completing_a_job_creates_the_next(example: Result, vc: Vc, rows: Rows) -> None:
    result = vc(
        "patch", "vcjob", "test-a", "--subresource", "status", "--type", "merge", "-p", COMPLETED
    )
    assert result.exit_code == 0
    assert result.stdout == "job.batch.volcano.sh/test-a patched\n"
    assert names(vc, rows, "vcjob") == ["test-a", "test-b"]


def test_example_runs_to_succeed_and_jobs_are_deleted(
    example: Result, vc: Vc, set_phase: Phase, rows: Rows
) -> None:
    set_phase("test-a", "Running")
    set_phase("test-a", "Completed")
    set_phase("test-b", "Completed")
    assert names(vc, rows, "vj") == ["test-a", "test-b", "test-c", "test-d"]
    set_phase("test-c", "Completed")
    assert "test-e" not in names(vc, rows, "vj")
    set_phase("test-d", "Completed")
    set_phase("test-e", "Completed")
    flow = rows(vc("get", "jf", "test").stdout)
    assert flow[0]["STATUS"] == "Succeed"
    gone = vc("get", "vcjob")
    assert (gone.stdout, gone.stderr) == ("", "No resources found in default namespace.\n")
    assert rows(vc("get", "jf", "-o", "wide").stdout)[0]["JOBS"] == "5/5"


def test_same_patch_again_is_no_change(example: Result, vc: Vc) -> None:
    args = ("patch", "vj", "test-a", "--subresource", "status", "-p", COMPLETED)
    assert vc(*args).stdout == "job.batch.volcano.sh/test-a patched\n"
    assert vc(*args).stdout == "job.batch.volcano.sh/test-a patched (no change)\n"


def test_status_without_subresource_changes_nothing(example: Result, vc: Vc, rows: Rows) -> None:
    result = vc("patch", "vj", "test-a", "--type", "merge", "-p", COMPLETED)
    assert result.stdout == "job.batch.volcano.sh/test-a patched (no change)\n"
    assert rows(vc("get", "vj").stdout)[0]["STATUS"] == ""


def test_metadata_patch_and_null_removes(example: Result, vc: Vc) -> None:
    set_label = '{"metadata":{"labels":{"team":"ml"}}}'
    assert vc("patch", "jt", "a", "-p", set_label).stdout.endswith("patched\n")
    assert "team: ml" in vc("get", "jt", "a", "-o", "yaml").stdout
    vc("patch", "jt", "a", "-p", '{"metadata":{"labels":{"team":null}}}')
    assert "team: ml" not in vc("get", "jt", "a", "-o", "yaml").stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        pytest.param(["jf", "test", "-p", "{bad"], "unable to parse the patch", id="bad-json"),
        pytest.param(["jf", "test", "-p", "[1]"], "must be a JSON object", id="not-an-object"),
        pytest.param(
            ["jf", "test", "-p", '{"spec":{"flows":[{"name":"a"}]}}'],
            "jobflow spec updates are not supported",
            id="flow-spec-refused",
        ),
        pytest.param(
            ["jf", "nope", "-p", "{}"],
            'Error from server (NotFound): jobflows.flow.volcano.sh "nope" not found',
            id="not-found",
        ),
        pytest.param(["jt", "a", "-p", '{"metadata":{"name":"b"}}'], "cannot change", id="rename"),
        pytest.param(
            ["vj", "test-a", "--subresource", "status", "-p", '{"status":{"running":"x"}}'],
            "status.running",
            id="schema",
        ),
    ],
)
def test_errors_are_one_line_exit_1(example: Result, vc: Vc, args: list[str], message: str) -> None:
    result = vc("patch", *args)
    assert result.exit_code == 1
    assert len(result.stderr.splitlines()) == 1, result.stderr
    assert message in result.stderr
    assert "Traceback" not in result.stderr


def test_only_merge_is_supported(example: Result, vc: Vc) -> None:
    result = vc("patch", "jf", "test", "--type", "json", "-p", "[]")
    assert result.exit_code == 2
    assert "only merge" in result.stderr


def test_unknown_subresource_is_usage_error(example: Result, vc: Vc) -> None:
    assert vc("patch", "jf", "test", "--subresource", "scale", "-p", "{}").exit_code == 2


# RFC 7386 Appendix A, every example.
RFC_7386 = [
    ({"a": "b"}, {"a": "c"}, {"a": "c"}),
    ({"a": "b"}, {"b": "c"}, {"a": "b", "b": "c"}),
    ({"a": "b"}, {"a": None}, {}),
    ({"a": "b", "b": "c"}, {"a": None}, {"b": "c"}),
    ({"a": ["b"]}, {"a": "c"}, {"a": "c"}),
    ({"a": "c"}, {"a": ["b"]}, {"a": ["b"]}),
    ({"a": {"b": "c"}}, {"a": {"b": "d", "c": None}}, {"a": {"b": "d"}}),
    ({"a": [{"b": "c"}]}, {"a": [1]}, {"a": [1]}),
    (["a", "b"], ["c", "d"], ["c", "d"]),
    ({"a": "b"}, ["c"], ["c"]),
    ({"a": "foo"}, None, None),
    ({"a": "foo"}, "bar", "bar"),
    ({"e": None}, {"a": 1}, {"e": None, "a": 1}),
    ([1, 2], {"a": "b", "c": None}, {"a": "b"}),
    ({}, {"a": {"bb": {"ccc": None}}}, {"a": {"bb": {}}}),
]


@pytest.mark.parametrize(("target", "patch", "expected"), RFC_7386)
def test_merge_patch_rfc_7386_examples(target: Any, patch: Any, expected: Any) -> None:
    before = repr(target)
    assert merge_patch(target, patch) == expected
    assert repr(target) == before  # the target is not modified
