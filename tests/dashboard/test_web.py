"""How the dashboard answers a store's errors (`dashboard.web.exc_code`): over a cluster,
RBAC's refusal is 403 and a refused credential of the dashboard's own 502 — not the 401
that would send the browser back to its login form."""

from __future__ import annotations

from vcflow.api.errors import AlreadyExists, Conflict, StoreError
from vcflow.dashboard import web
from vcflow.kubeapi import status as kubestatus


def test_store_errors_map_to_codes() -> None:
    assert web.exc_code(AlreadyExists("x")) == 409
    assert web.exc_code(Conflict("x")) == 409
    assert web.exc_code(kubestatus.Forbidden("x")) == 403
    assert web.exc_code(kubestatus.Unauthorized("x")) == 502
    assert web.exc_code(StoreError("x")) == 500
