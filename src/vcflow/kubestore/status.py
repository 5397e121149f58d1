"""A failed answer of the Kubernetes API as vcflow's error: its body's Status read by
`kubeapi.status.error_of` (the codes, reasons and their errors live there). Used by
`calls`, `store` and `watching` after each request, and by the operator.
"""

from __future__ import annotations

import json
from typing import Any

from vcflow.api.errors import VcflowError
from vcflow.kubeapi import status as kubestatus
from vcflow.kubestore.client import Response


def status_of(response: Response) -> dict[str, Any]:
    """The Status object of an error answer ({} when the body is not one)."""
    try:
        found = json.loads(response.data)
    except ValueError:
        return {}
    return found if isinstance(found, dict) else {}


def error_for(
    response: Response, *, kind: str = "", namespace: str = "", name: str = ""
) -> VcflowError:
    """The vcflow error of a failed request about object `kind namespace/name`."""
    return kubestatus.error_of(
        status_of(response),
        response.status,
        response.data,
        kind=kind,
        namespace=namespace,
        name=name,
    )
