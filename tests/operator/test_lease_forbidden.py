"""A Lease the operator's RBAC does not cover (deploy/rbac grants leases in vcflow-system
only; outside a pod the Lease's namespace defaults to `default`): kube-apiserver answers 403
at every try, and the warning says what to do (--lease-namespace). Seen running the operator
on the host against the test cluster (tests/cluster), where the emulator had no RBAC."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from vcflow.api.clock import FakeClock
from vcflow.kubeapi.status import Forbidden
from vcflow.operator.election import FORBIDDEN_HINT, Elector, Timing

REFUSED = (
    'Error from server (Forbidden): leases.coordination.k8s.io "vcflow-operator" is forbidden: '
    'User "system:serviceaccount:vcflow-system:vcflow-operator" cannot get resource "leases" '
    'in API group "coordination.k8s.io" in the namespace "default"'
)


class Refusing:
    """A store whose every call is refused as RBAC refuses it."""

    def __getattr__(self, name: str) -> Any:
        def refuse(*args: Any, **kwargs: Any) -> Any:
            raise Forbidden(REFUSED)

        return refuse


def test_a_refused_lease_is_a_warning_that_names_the_flag(
    caplog: pytest.LogCaptureFixture,
) -> None:
    clock = FakeClock()
    elector = Elector(
        Refusing(),  # type: ignore[arg-type]
        "default",
        "vcflow-operator",
        "me",
        Timing(),
        now=clock.now,
        monotonic=clock.monotonic,
    )
    with caplog.at_level(logging.WARNING, logger="vcflow.operator"):
        assert not elector.try_acquire_or_renew()
    [record] = caplog.records
    assert record.getMessage() == (
        f"leader election: reading lease default/vcflow-operator: {REFUSED}{FORBIDDEN_HINT}"
    )
    assert "--lease-namespace" in FORBIDDEN_HINT
