"""`vcflow describe`: the header, per-job conditions (Waiting entries with reason and
message), job lists, spec summaries and the Events recorded by the controllers."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from typer.testing import Result

from vcflow.api.jobflow import JobFlow
from vcflow.cli import sections

from .conftest import RunOne

Vc = Callable[..., Result]
Phase = Callable[[str, str], Result]
EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "jobflow"


def squeezed(text: str) -> list[str]:
    """Lines with runs of blanks collapsed, so assertions do not depend on column widths."""
    return [" ".join(line.split()) for line in text.splitlines()]


def test_flow_header_conditions_and_events(example: Result, vc: Vc, set_phase: Phase) -> None:
    set_phase("test-a", "Completed")
    result = vc("describe", "jf", "test")
    assert result.exit_code == 0, result.output
    lines = squeezed(result.stdout)
    for expected in (
        "Name: test",
        "Namespace: default",
        "Labels: <none>",
        "API Version: flow.volcano.sh/v1alpha1",
        "Kind: JobFlow",
        "Job Retain Policy: delete",
        "e c, d all no",
        "Phase: Running",
        "JOB PHASE REASON MESSAGE",
        "test-a Completed",
        "test-c Waiting Dependencies waiting for all of: b",
        "test-e Waiting Dependencies waiting for all of: c, d",
        "Completed Jobs: test-a",
        "Type Reason Age From Message",
    ):
        assert expected in lines, expected
    events = [line for line in lines if line.startswith("Normal Created")]
    assert events[0].endswith("vc-controller-manager create a job named test-a!")
    assert events[1].endswith("create a job named test-b!")


def test_waiting_for_a_missing_template(vc: Vc) -> None:
    vc("apply", "-f", EXAMPLE / "JobFlow.yaml")
    lines = squeezed(vc("describe", "jobflow", "test").stdout)
    assert 'test-a Waiting TemplateNotFound jobtemplate.flow.volcano.sh "a" not found' in lines
    assert "Events: <none>" in lines


def test_events_of_an_earlier_flow_of_the_same_name_are_not_shown(example: Result, vc: Vc) -> None:
    vc("delete", "jf", "test", "--force")
    vc("apply", "-f", EXAMPLE)
    text = vc("describe", "jf", "test").stdout
    assert text.count("create a job named test-a!") == 1


def test_vcjob(example: Result, vc: Vc, set_phase: Phase) -> None:
    set_phase("test-a", "Running")
    lines = squeezed(vc("describe", "vcjob", "test-a").stdout)
    for expected in (
        "Name: test-a",
        "Kind: Job",
        "Controlled By: JobFlow/test",
        "Labels: volcano.sh/createdByJobFlow=default.test",
        "Min Available: 1",
        "Queue: default",
        "default-nginx 1 <none> nginx:1.14.2",
        "Phase: Running",
    ):
        assert expected in lines, expected


def test_template(example: Result, vc: Vc) -> None:
    lines = squeezed(vc("describe", "jt", "a").stdout)
    assert "Kind: JobTemplate" in lines
    assert "Job Depends On List: test-a" in lines


def test_every_object_of_the_kind_and_missing_names(example: Result, vc: Vc) -> None:
    every = vc("describe", "jt").stdout
    assert [line for line in every.splitlines() if line.startswith("Name:")] == [
        f"Name:              {t}" for t in "abcde"
    ]
    missing = vc("describe", "jt", "nope")
    assert missing.exit_code == 1
    assert missing.stderr == (
        'Error from server (NotFound): jobtemplates.flow.volcano.sh "nope" not found\n'
    )


def test_flow_queue_and_priority_class_shown_when_set() -> None:
    def described(spec: dict[str, object]) -> list[str]:
        flow = JobFlow.from_dict({"metadata": {"name": "f"}, "spec": {"flows": [], **spec}})
        text = sections.Text()
        sections.flow_sections(flow, text)
        return squeezed("\n".join(text.lines))

    lines = described({"queue": "team-a", "priorityClassName": "team-a-prod"})
    assert "Queue: team-a" in lines and "Priority Class Name: team-a-prod" in lines
    plain = described({})
    assert not any(line.startswith(("Queue", "Priority Class")) for line in plain)


def test_a_failed_job_says_why_as_run_does(run_one: RunOne, vc: Vc) -> None:
    """A job whose container exited 3: describe's per-job table and the vcjob's Status say
    what `vcflow run`'s closing table says (not a bare `Failed`)."""
    ran = run_one("echo before; exit 3")
    assert ran.result.exit_code == 1
    why = "exit code 3 (Error): pod f-a-t-0, container main"
    assert why in ran.result.stdout
    flow = squeezed(vc("describe", "jobflow", "f").stdout)
    assert f"f-a Failed {why}" in flow
    job = squeezed(vc("describe", "vcjob", "f-a").stdout)
    assert f"Failure: {why}" in job
    assert "Phase: Failed" in job
