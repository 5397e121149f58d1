"""A failed answer of the Kubernetes API as vcflow's error: its body's Status read by
`kubeapi.status.error_of` (the codes, reasons and their errors live there); an admission
refusal's `Warning` headers (kube-apiserver sends a refused write's warnings too) become
its ValidationFailed's warnings. Used by `calls`, `store` and `watching` after each
request, and by the operator.
"""

from __future__ import annotations

import json
from typing import Any

from vcflow.api.errors import ValidationFailed, VcflowError
from vcflow.kubeapi import status as kubestatus
from vcflow.kubeapi import warningtext
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
    """The vcflow error of a failed request about object `kind namespace/name`; a
    refusal's with the answer's warnings."""
    error = kubestatus.error_of(
        status_of(response),
        response.status,
        response.data,
        kind=kind,
        namespace=namespace,
        name=name,
    )
    if isinstance(error, ValidationFailed):
        error.warnings = [
            warningtext.heard(w, kind=kind, namespace=namespace, name=name)
            for w in response.warnings
        ]
    return error
