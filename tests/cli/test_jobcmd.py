"""`vcflow suspend|resume|terminate vcjob`: a bus Command aimed at the job is stored (the
runtime carries it out); pods show up in `get`/`describe`."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import Result

from vcflow.api.command import Command
from vcflow.store import SqliteStore

Vc = Callable[..., Result]


@pytest.mark.parametrize(
    ("verb", "action", "word", "phase"),
    [
        ("suspend", "AbortJob", "suspended", "Running"),
        ("resume", "ResumeJob", "resumed", "Aborted"),  # only a suspended job resumes
        ("terminate", "TerminateJob", "terminated", "Pending"),
    ],
)
def test_verb_stores_a_command_for_the_job(
    example: Result,
    vc: Vc,
    set_phase: Callable[[str, str], Result],
    state_dir: Path,
    verb: str,
    action: str,
    word: str,
    phase: str,
) -> None:
    set_phase("test-a", phase)
    result = vc(verb, "vj", "test-a")
    assert result.exit_code == 0, result.output
    assert result.stdout == f"job.batch.volcano.sh/test-a {word}\n"
    with SqliteStore.in_state_dir(state_dir) as store:
        (command,) = store.list(Command)
    assert command.action == action
    assert command.target_object is not None and command.target_object.name == "test-a"
    assert [r.name for r in command.metadata.owner_references] == ["test-a"]


def test_unknown_job_is_one_line_exit_1(example: Result, vc: Vc) -> None:
    result = vc("suspend", "vcjob", "nope")
    assert result.exit_code == 1
    assert result.stderr.strip().endswith('jobs.batch.volcano.sh "nope" not found')


def test_only_vcjobs_take_commands(example: Result, vc: Vc) -> None:
    assert vc("suspend", "jobflow", "test").exit_code == 2


def test_get_pods_without_any(example: Result, vc: Vc) -> None:
    result = vc("get", "pods")
    assert result.exit_code == 0
    assert "No resources found in default namespace." in result.stderr
