"""Commands that would change nothing say so and exit 1 (README "Commands that would do
nothing"): `stop` of a finished flow, `suspend`/`terminate` of a vcjob that is not Pending or
Running, `resume` of one that is not suspended. A request already under way is not one."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
import yaml
from typer.testing import Result

from vcflow.api.command import Command
from vcflow.local import statedir
from vcflow.store import SqliteStore

Vc = Callable[..., Result]
Phase = Callable[[str, str], Result]
FLOW = "jobflow.flow.volcano.sh/test"


def commands(state_dir: Path) -> list[str]:
    store = SqliteStore.in_state_dir(state_dir)
    try:
        return [c.action or "" for c in store.list(Command)]
    finally:
        store.close()


def test_stop_of_a_flow_that_succeeded(example: Result, vc: Vc, set_phase: Phase) -> None:
    for job in ("test-a", "test-b", "test-c", "test-d", "test-e"):
        set_phase(job, "Completed")
    result = vc("stop", "jf", "test")
    assert result.exit_code == 1
    assert result.stdout == ""
    assert result.stderr == f"{FLOW} has already finished (Succeed): there is nothing to stop\n"
    shown = yaml.safe_load(vc("get", "jf", "test", "-o", "yaml").stdout)
    assert "vcflow.io/stop" not in shown["metadata"].get("annotations", {})


def test_stop_of_a_failed_flow_with_a_job_still_running(
    example: Result, vc: Vc, set_phase: Phase
) -> None:
    """Row 8: after Failed a job may still run; stopping removes it, so it is not a no-op."""
    set_phase("test-a", "Completed")
    set_phase("test-b", "Running")
    set_phase("test-b", "Failed")
    assert "Failed" in vc("get", "jf", "test").stdout
    set_phase("test-b", "Running")  # as if restarted by hand: the flow stays Failed
    result = vc("stop", "jf", "test")
    assert (result.exit_code, result.stdout) == (0, f"{FLOW} stopping\n")
    assert "test-b" not in vc("get", "vj").stdout


def test_stop_of_a_flow_already_stopping_is_no_error(
    example: Result, vc: Vc, state_dir: Path
) -> None:
    """With a controller holding the lock, the stop is only asked: asking again is fine."""
    with statedir.ControllerLock(state_dir, statedir.CONTROLLER) as held:
        assert held.acquired
        assert vc("stop", "jf", "test").exit_code == 0
        first = yaml.safe_load(vc("get", "jf", "test", "-o", "yaml").stdout)["metadata"]
        again = vc("stop", "jf", "test")
        assert (again.exit_code, again.stdout) == (0, f"{FLOW} stopping\n")
        later = yaml.safe_load(vc("get", "jf", "test", "-o", "yaml").stdout)["metadata"]
        assert later["annotations"] == first["annotations"]


def test_every_name_is_tried_and_problems_come_last(
    example: Result, vc: Vc, set_phase: Phase
) -> None:
    for job in ("test-a", "test-b", "test-c", "test-d", "test-e"):
        set_phase(job, "Completed")
    result = vc("stop", "jf", "nope", "test")
    assert result.exit_code == 1
    assert result.stderr.splitlines() == [
        'Error from server (NotFound): jobflows.flow.volcano.sh "nope" not found',
        f"{FLOW} has already finished (Succeed): there is nothing to stop",
    ]


JOB = "job.batch.volcano.sh/test-a"
SUSPEND = "only a Pending or Running vcjob can be suspended"
TERMINATE = "only a Pending or Running vcjob can be terminated"
RESUME = "only a suspended vcjob (Aborting or Aborted) can be resumed"


@pytest.mark.parametrize(
    ("phase", "verb", "done", "why"),
    [
        ("Terminated", "resume", "resumed", RESUME),
        ("Running", "resume", "resumed", RESUME),
        ("Completed", "suspend", "suspended", SUSPEND),
        ("Aborted", "suspend", "suspended", SUSPEND),
        ("Failed", "terminate", "terminated", TERMINATE),
        ("Aborted", "terminate", "terminated", TERMINATE),
        ("Completing", "terminate", "terminated", TERMINATE),
    ],
)
def test_a_command_that_would_do_nothing(
    example: Result,
    vc: Vc,
    set_phase: Phase,
    state_dir: Path,
    phase: str,
    verb: str,
    done: str,
    why: str,
) -> None:
    set_phase("test-a", phase)
    result = vc(verb, "vcjob", "test-a")
    assert result.exit_code == 1
    assert result.stdout == ""
    assert result.stderr == f"{JOB} is {phase}: it would not be {done} ({why})\n"
    assert commands(state_dir) == []


def test_a_command_while_restarting_is_dropped_by_volcano(
    example: Result, vc: Vc, set_phase: Phase, state_dir: Path
) -> None:
    set_phase("test-a", "Restarting")
    result = vc("suspend", "vcjob", "test-a")
    assert result.exit_code == 1
    assert result.stderr.startswith(f"{JOB} is Restarting: Volcano drops a command sent while")
    assert commands(state_dir) == []


@pytest.mark.parametrize(
    ("phase", "verb", "action"),
    [
        ("Running", "suspend", "AbortJob"),
        ("Pending", "terminate", "TerminateJob"),
        ("Aborted", "resume", "ResumeJob"),
        ("Aborting", "resume", "ResumeJob"),
    ],
)
def test_a_command_that_acts_is_sent(
    example: Result, vc: Vc, set_phase: Phase, state_dir: Path, phase: str, verb: str, action: str
) -> None:
    set_phase("test-a", phase)
    result = vc(verb, "vcjob", "test-a")
    assert result.exit_code == 0, result.output
    assert commands(state_dir) == [action]
