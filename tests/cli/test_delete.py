"""`vcflow delete` and `vcflow stop`: the refusal of an unfinished flow (compatibility row 11),
stop → Failed → delete, --force, -f, garbage collection of a flow's vcjobs."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
import yaml
from typer.testing import Result

Vc = Callable[..., Result]
Rows = Callable[[str], list[dict[str, str]]]
Phase = Callable[[str, str], Result]
EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "jobflow"
NO_JOBS = "No resources found in default namespace.\n"


def test_running_flow_is_refused_then_stop_then_delete(
    example: Result, vc: Vc, set_phase: Phase, rows: Rows
) -> None:
    set_phase("test-a", "Running")
    refused = vc("delete", "jobflow", "test")
    assert refused.exit_code == 1
    assert refused.stdout == ""
    assert len(refused.stderr.splitlines()) == 1
    assert 'cannot delete JobFlow "test" while it is Running' in refused.stderr

    stopped = vc("stop", "jobflow", "test")
    assert stopped.exit_code == 0
    assert stopped.stdout == "jobflow.flow.volcano.sh/test stopping\n"
    assert rows(vc("get", "jf").stdout)[0]["STATUS"] == "Failed"
    assert vc("get", "vj").stderr == NO_JOBS
    annotations = yaml.safe_load(vc("get", "jf", "test", "-o", "yaml").stdout)["metadata"]
    assert "vcflow.io/stop" in annotations["annotations"]

    deleted = vc("delete", "jobflow", "test")
    assert (deleted.exit_code, deleted.stdout) == (0, 'jobflow.flow.volcano.sh "test" deleted\n')
    assert vc("get", "jf").stderr == NO_JOBS


def test_stop_twice_keeps_the_first_request(example: Result, vc: Vc) -> None:
    """The first stop ended the flow (its jobs were removed at once): the second has
    nothing to stop, says so and changes nothing."""
    vc("stop", "jf", "test")
    first = yaml.safe_load(vc("get", "jf", "test", "-o", "yaml").stdout)
    second = vc("stop", "jf", "test")
    assert second.exit_code == 1
    assert second.stderr == (
        "jobflow.flow.volcano.sh/test has already finished (Failed) and none of its vcjobs is "
        "unfinished: there is nothing to stop\n"
    )
    again = yaml.safe_load(vc("get", "jf", "test", "-o", "yaml").stdout)
    assert again["metadata"]["annotations"] == first["metadata"]["annotations"]


def test_force_skips_the_check_and_removes_the_jobs(
    example: Result, vc: Vc, set_phase: Phase
) -> None:
    set_phase("test-a", "Running")
    result = vc("delete", "jf", "test", "--force")
    assert (result.exit_code, result.stdout) == (0, 'jobflow.flow.volcano.sh "test" deleted\n')
    assert vc("get", "vj").stderr == NO_JOBS


def test_template_of_unfinished_flow_stays(example: Result, vc: Vc) -> None:
    result = vc("delete", "jt", "a", "b")
    assert result.exit_code == 1
    lines = result.stderr.splitlines()
    assert len(lines) == 2
    assert all("unfinished JobFlow(s) test use it" in line for line in lines)
    assert vc("delete", "jt", "a", "--force").stdout == 'jobtemplate.flow.volcano.sh "a" deleted\n'


def test_delete_by_manifests(example: Result, vc: Vc) -> None:
    vc("stop", "jf", "test")
    result = vc("delete", "-f", EXAMPLE)
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines() == [
        'jobflow.flow.volcano.sh "test" deleted',
        *(f'jobtemplate.flow.volcano.sh "{t}" deleted' for t in "abcde"),
    ]
    assert vc("get", "jt").stderr == NO_JOBS


def test_missing_names_are_reported_after_the_others(example: Result, vc: Vc) -> None:
    vc("stop", "jf", "test")
    result = vc("delete", "jf", "nope", "test")
    assert result.exit_code == 1
    assert result.stdout == 'jobflow.flow.volcano.sh "test" deleted\n'
    assert result.stderr == (
        'Error from server (NotFound): jobflows.flow.volcano.sh "nope" not found\n'
    )
    assert vc("delete", "jf", "nope", "--ignore-not-found").exit_code == 0


def test_stop_of_missing_flow(vc: Vc) -> None:
    result = vc("stop", "jf", "nope")
    assert result.exit_code == 1
    assert result.stderr == (
        'Error from server (NotFound): jobflows.flow.volcano.sh "nope" not found\n'
    )


@pytest.mark.parametrize(
    "args",
    [
        pytest.param(["delete"], id="nothing"),
        pytest.param(["delete", "jf"], id="kind-without-name"),
        pytest.param(["delete", "deployments", "x"], id="unknown-kind"),
        pytest.param(["delete", "jf", "x", "-f", "y.yaml"], id="names-and-files"),
        pytest.param(["stop", "jt", "a"], id="stop-a-template"),
        pytest.param(["stop", "jf"], id="stop-without-name"),
    ],
)
def test_usage_errors_exit_2(vc: Vc, args: list[str]) -> None:
    result = vc(*args)
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
