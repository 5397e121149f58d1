"""The `coordination.k8s.io/v1` Lease: the object the operator's replicas elect their leader
on (`operator.election`), as client-go's leaderelection writes it. `vcflow server` serves it
so the operator's tests and bench run against a bare server."""

from __future__ import annotations

from typing import Literal

from vcflow.api.meta import Resource, WireModel

API_VERSION: Literal["coordination.k8s.io/v1"] = "coordination.k8s.io/v1"


class LeaseSpec(WireModel):
    """Times are MicroTime (RFC 3339 with microseconds, UTC)."""

    holder_identity: str | None = None
    lease_duration_seconds: int | None = None
    acquire_time: str | None = None
    renew_time: str | None = None
    lease_transitions: int | None = None


class Lease(Resource):
    api_version: Literal["coordination.k8s.io/v1"] = API_VERSION
    kind: Literal["Lease"] = "Lease"
    spec: LeaseSpec | None = None
