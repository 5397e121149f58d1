"""One JobFlow status write, as the controller's flush makes it: the status the flow's index
renders, skipped when the store holds it already, written against the flow's
resourceVersion — and, when someone else wrote the flow since, once more against a fresh
read (the status is the controller's alone to write). Safe to run on the flush's worker
threads: it only calls the store."""

from __future__ import annotations

from typing import Any

from vcflow.api.errors import Conflict
from vcflow.api.jobflow import JobFlow
from vcflow.store.base import Store


def put_status(store: Store, flow: JobFlow, data: dict[str, Any]) -> JobFlow | None:
    """The flow as written with status `data`; None when the flow was deleted and created
    again since (its own events follow)."""
    try:
        return _put(store, flow, data)
    except Conflict:  # changed since we cached it; the status is ours to write
        meta = flow.metadata
        fresh = store.get(JobFlow, meta.namespace, meta.name)
        if fresh.metadata.uid != meta.uid:
            return None
        return _put(store, fresh, data)


def _put(store: Store, flow: JobFlow, data: dict[str, Any]) -> JobFlow:
    meta = flow.metadata
    return store.update_status_data(
        JobFlow,
        meta.namespace,
        meta.name,
        data,
        resource_version=meta.resource_version,
        uid=meta.uid,
        base=flow,  # (the stored flow: only the status is validated)
    )


def resource_version(flow: JobFlow) -> int:
    return int(flow.metadata.resource_version or 0)
