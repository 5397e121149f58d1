"""`vcflow retry jobflow` and `vcflow resubmit jobflow` (docs/flow-features.md §5): one write
each, carried out by the controllers the command runs in-process; refusals in one line."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest
from typer.testing import CliRunner

from vcflow.api.jobflow import JobFlow
from vcflow.api.vcjob import VCJob
from vcflow.cli.app import app
from vcflow.local import statedir
from vcflow.reconcile import flow as reconcile
from vcflow.store import SqliteStore

from .conftest import Phase, Vc


def hint(state_dir: Path) -> str:
    """What an embedded retry or resubmit adds when nothing runs the state directory."""
    return f"; run it with: vcflow --state-dir {shlex.quote(str(state_dir))} run"


def stored(state_dir: Path, name: str) -> JobFlow:
    with SqliteStore.in_state_dir(state_dir) as store:
        return store.get(JobFlow, "default", name)


def vcjobs(state_dir: Path) -> dict[str, str | None]:
    """vcjob name → its attempt annotation."""
    with SqliteStore.in_state_dir(state_dir) as store:
        return {j.name: j.metadata.annotations.get("vcflow.io/attempt") for j in store.list(VCJob)}


def test_retry_runs_a_failed_flow_again_from_where_it_failed(
    vc: Vc, example: object, set_phase: Phase, state_dir: Path
) -> None:
    set_phase("test-a", "Completed")
    set_phase("test-b", "Failed")
    assert stored(state_dir, "test").phase == "Failed"
    result = vc("retry", "jobflow", "test")
    assert result.exit_code == 0, result.output
    assert result.stdout == f"jobflow.flow.volcano.sh/test retried{hint(state_dir)}\n"
    flow = stored(state_dir, "test")
    assert flow.phase == "Running"
    assert vcjobs(state_dir) == {"test-a": None, "test-b": "2"}  # a kept, b attempt 2
    assert flow.status is not None and flow.status.last_retry is not None
    assert flow.metadata.annotations[reconcile.RETRY_ANNOTATION] == flow.status.last_retry


def test_retry_restart_successful_reruns_the_named_entries_and_what_follows(
    vc: Vc, example: object, set_phase: Phase, state_dir: Path
) -> None:
    for name in ("test-a", "test-b"):
        set_phase(name, "Completed")
    set_phase("test-c", "Failed")
    set_phase("test-d", "Completed")
    result = vc("retry", "jf", "test", "--restart-successful", "--entries", "b")
    assert result.exit_code == 0, result.output
    assert vcjobs(state_dir) == {"test-a": None, "test-b": "2"}  # c and d wait for b again
    request = json.loads(stored(state_dir, "test").metadata.annotations["vcflow.io/retry"])
    assert request["entries"] == ["b"] and request["restartSuccessful"] is True


def test_retry_lifts_a_stop(vc: Vc, example: object, state_dir: Path) -> None:
    assert vc("stop", "jobflow", "test").exit_code == 0
    assert stored(state_dir, "test").phase == "Failed"
    result = vc("retry", "jobflow", "test")
    assert result.exit_code == 0, result.output
    flow = stored(state_dir, "test")
    assert reconcile.STOP_ANNOTATION not in flow.metadata.annotations
    assert flow.phase in ("Pending", "Running") and "test-a" in vcjobs(state_dir)


def test_retry_refuses_what_it_cannot_do_in_one_line(
    vc: Vc, example: object, set_phase: Phase
) -> None:
    running = vc("retry", "jobflow", "test")
    assert running.exit_code == 1
    assert running.stderr == (
        "jobflow.flow.volcano.sh/test is Pending: only a Failed flow is retried "
        "(vcflow resubmit jobflow test runs it again as a new flow)\n"
    )
    set_phase("test-a", "Failed")
    unknown = vc("retry", "jobflow", "test", "--restart-successful", "--entries", "a,zz")
    assert unknown.exit_code == 1
    assert unknown.stderr == (
        'jobflow.flow.volcano.sh/test has no entry "zz" (its entries: a, b, c, d, e)\n'
    )
    usage = vc("retry", "jobflow", "test", "--entries", "a")
    assert usage.exit_code == 2 and "--restart-successful" in usage.stderr
    missing = vc("retry", "jobflow", "nope")
    assert missing.exit_code == 1
    assert 'jobflows.flow.volcano.sh "nope" not found' in missing.stderr
    wrong_kind = vc("retry", "vcjob", "test-a")
    assert wrong_kind.exit_code == 2


def test_resubmit_creates_a_new_flow_with_the_same_spec(
    vc: Vc, example: object, state_dir: Path
) -> None:
    assert vc("stop", "jobflow", "test").exit_code == 0
    result = vc("resubmit", "jobflow", "test")
    assert result.exit_code == 0, result.output
    (line,) = result.stdout.splitlines()
    created = f" created{hint(state_dir)}"
    assert line.startswith("jobflow.flow.volcano.sh/test-") and line.endswith(created)
    new = line.split("/", 1)[1].removesuffix(created)
    copy, old = stored(state_dir, new), stored(state_dir, "test")
    assert copy.spec == old.spec
    assert copy.metadata.annotations["vcflow.io/resubmitted-from"] == "test"
    assert reconcile.STOP_ANNOTATION not in copy.metadata.annotations
    assert f"{new}-a" in vcjobs(state_dir)  # the controllers ran it
    named = vc("resubmit", "jf", "test", "--name", "again")
    assert named.stdout == f"jobflow.flow.volcano.sh/again created{hint(state_dir)}\n"
    twice = vc("resubmit", "jf", "test", "--name", "again")
    assert twice.exit_code == 1
    assert twice.stderr == (
        'Error from server (AlreadyExists): jobflow.flow.volcano.sh "again" already exists\n'
    )


def test_no_run_hint_while_a_controller_runs_the_state_directory(
    vc: Vc, example: object, set_phase: Phase, state_dir: Path
) -> None:
    """A `vcflow controller` (or run, or server) holding the lock runs the flow: the line is
    kubectl's alone. A writer settling for a moment does not count."""
    set_phase("test-a", "Failed")
    with statedir.ControllerLock(state_dir, statedir.CONTROLLER) as lock:
        assert lock.acquired
        assert vc("retry", "jobflow", "test").stdout == "jobflow.flow.volcano.sh/test retried\n"
        made = vc("resubmit", "jf", "test", "--name", "again")
        assert made.stdout == "jobflow.flow.volcano.sh/again created\n"
    with statedir.ControllerLock(state_dir, statedir.WRITER) as lock:
        assert lock.acquired
        made = vc("resubmit", "jf", "test", "--name", "other")
        assert made.stdout == f"jobflow.flow.volcano.sh/other created{hint(state_dir)}\n"


def test_the_run_hint_names_only_a_state_dir_given_on_the_command_line(
    vc: Vc, example: object, state_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(statedir.ENV_VAR, str(state_dir))
    made = CliRunner().invoke(app, ["resubmit", "jf", "test", "--name", "again"])
    assert made.stdout == "jobflow.flow.volcano.sh/again created; run it with: vcflow run\n"
    after = vc("resubmit", "jf", "test", "--name", "other")
    assert after.stdout == f"jobflow.flow.volcano.sh/other created{hint(state_dir)}\n"
