"""Records Kubernetes-style Events on objects, as `v1 Event` objects in the store, so
`describe` shows them and the conformance runner can assert them. Used by the controllers
and the runtime alike (they meet only through the store), so it lives here."""

from __future__ import annotations

import uuid

from vcflow.api import clock as clocks
from vcflow.api.event import Event, EventSource, ObjectReference
from vcflow.api.meta import ObjectMeta, OwnerReference, Resource
from vcflow.store.base import Store

#: The longest Event message (Kubernetes' events API `note`: 1 kB); a longer one (an error
#: quoting a value) is cut, so an Event never carries a copy of a whole object.
MAX_MESSAGE = 1024
NORMAL = "Normal"
WARNING = "Warning"
COMPONENT = "vc-controller-manager"


def short_message(message: str) -> str:
    """`message`, cut to MAX_MESSAGE characters (with `...` when cut)."""
    return message if len(message) <= MAX_MESSAGE else message[: MAX_MESSAGE - 3] + "..."


class Recorder:
    def __init__(self, store: Store, clock: clocks.Clock, component: str = COMPONENT) -> None:
        self._store = store
        self._clock = clock
        self._component = component

    def record(self, obj: Resource, type_: str, reason: str, message: str) -> None:
        """Create one Event about `obj` (never reviewed: events are not user objects)."""
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
            message=short_message(message),
            type=type_,
            first_timestamp=stamp,
            last_timestamp=stamp,
            source=EventSource(component=self._component),
        )
        self._store.create(event, admit=False)
