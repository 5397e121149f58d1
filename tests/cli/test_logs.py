"""`vcflow logs`: kubectl's `pod/NAME` form, a clear usage error for other kinds, and a pod
without a log explained from its status (a launch failure says why) rather than missing."""

from __future__ import annotations

import pytest

from .conftest import RunOne, Vc

SECRET_ENV = "\n              env: [{name: S, valueFrom: {secretKeyRef: {name: s, key: k}}}]"


@pytest.mark.parametrize("name", ["f-a-t-0", "pod/f-a-t-0", "pods/f-a-t-0", "po/f-a-t-0"])
def test_pod_names_as_kubectl_takes_them(vc: Vc, run_one: RunOne, name: str) -> None:
    assert run_one("echo hello", "--timeout", "60").result.exit_code == 0
    result = vc("logs", name)
    assert result.exit_code == 0, result.output
    assert result.stdout == "hello\n"


@pytest.mark.parametrize("name", ["jt/a", "cm/x"])
def test_other_kinds_are_a_usage_error(vc: Vc, name: str) -> None:
    result = vc("logs", name)
    assert result.exit_code == 2
    assert f'"{name}" has no logs: give a pod, jobflow/NAME or vcjob/NAME' in result.stderr


def test_an_unknown_kind_is_a_usage_error(vc: Vc) -> None:
    result = vc("logs", "deploy/x")
    assert result.exit_code == 2
    assert 'unknown kind "deploy" in "deploy/x"' in result.stderr


def test_a_pod_that_does_not_exist(vc: Vc) -> None:
    result = vc("logs", "pod/nope")
    assert result.exit_code == 1
    assert result.stderr == 'Error from server (NotFound): pods "nope" not found\n'


def test_a_pod_that_failed_to_launch_says_why(vc: Vc, run_one: RunOne) -> None:
    assert run_one("echo hello", "--timeout", "60", extra=SECRET_ENV).result.exit_code == 1
    result = vc("logs", "f-a-t-0")
    assert result.exit_code == 1
    (line,) = result.stderr.splitlines()
    # (its env reads a Secret that was never applied: the kubelet's config error)
    assert line == (
        'pod "f-a-t-0" has no logs: it failed to start (CreateContainerConfigError): '
        'secret "s" not found'
    )
