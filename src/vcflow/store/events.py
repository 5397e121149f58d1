"""Records Kubernetes-style Events on objects, as `v1 Event` objects in the store, so
`describe` shows them and the conformance runner can assert them. Used by the controllers
and the runtime alike (they meet only through the store), so it lives here."""

from __future__ import annotations

import uuid

from vcflow.api import clock as clocks
from vcflow.api.event import Event, EventSource, ObjectReference
from vcflow.api.meta import ObjectMeta, OwnerReference, Resource
from vcflow.store.base import Store

NORMAL = "Normal"
WARNING = "Warning"
COMPONENT = "vc-controller-manager"


class Recorder:
    """With `deferred`, `record` keeps the Event and `flush` writes it: Kubernetes' event
    broadcaster sends Events apart from the work that caused them too, so a controller's
    critical writes (the vcjob a flow creates) do not wait for them. A deferred Event not yet
    flushed is lost with the process, as a broadcaster's queue is."""

    def __init__(
        self,
        store: Store,
        clock: clocks.Clock,
        component: str = COMPONENT,
        *,
        deferred: bool = False,
    ) -> None:
        self._store = store
        self._clock = clock
        self._component = component
        self._deferred = deferred
        self._pending: list[Event] = []

    def flush(self) -> bool:
        """Write the deferred Events (one transaction); True if there were any."""
        if not self._pending:
            return False
        pending, self._pending = self._pending, []
        with self._store.transaction():
            for event in pending:
                self._store.create(event, admit=False)
        return True

    def record(self, obj: Resource, type_: str, reason: str, message: str) -> None:
        """Create one Event about `obj` (never reviewed: events are not user objects), now
        or, `deferred`, at the next `flush`."""
        stamp = clocks.rfc3339(self._clock.now())
        event = Event(
            metadata=ObjectMeta(
                name=f"{obj.name[:200]}.{uuid.uuid4().hex[:16]}",
                namespace=obj.namespace,
                # owned by the object it is about, so deleting that object removes it
                owner_references=[
                    OwnerReference(
                        api_version=obj.api_version,
                        kind=obj.kind,
                        name=obj.name,
                        uid=obj.metadata.uid,
                    )
                ]
                if obj.metadata.uid
                else [],
            ),
            involved_object=ObjectReference(
                api_version=obj.api_version,
                kind=obj.kind,
                namespace=obj.namespace,
                name=obj.name,
                uid=obj.metadata.uid or None,
            ),
            reason=reason,
            message=message,
            type=type_,
            first_timestamp=stamp,
            last_timestamp=stamp,
            source=EventSource(component=self._component),
        )
        if self._deferred:
            self._pending.append(event)
        else:
            self._store.create(event, admit=False)
