"""`Scoped`: the store as the operator's controllers see it, only the namespaces given
(`vcflow operator --namespace NS ...`; none: all): a list of all namespaces becomes one list
per namespace, and events of other namespaces are dropped. Every other call passes through
(KubeStore's informer watches each kind the controllers read in all namespaces, so the
operator's RBAC needs list and watch on those cluster-wide). Used by `process`.
"""

from __future__ import annotations

import builtins
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from typing import Any

from vcflow.api.meta import Resource
from vcflow.api.pod import Pod
from vcflow.store.base import (
    ApplyResult,
    Defaulter,
    KindRegistry,
    R,
    SelectorLike,
    Store,
    WatchEvent,
)


class Scoped:
    """`store` limited to `namespaces` (empty: all)."""

    def __init__(self, store: Store, namespaces: Sequence[str]) -> None:
        self.store = store
        self.kinds: KindRegistry = store.kinds
        self.namespaces = tuple(dict.fromkeys(namespaces))

    def _each(self, namespace: str | None) -> tuple[str | None, ...]:
        if not self.namespaces:
            return (namespace,)
        if namespace is None:
            return self.namespaces
        return (namespace,) if namespace in self.namespaces else ()

    def _in_scope(self, namespace: str) -> bool:
        return not self.namespaces or namespace in self.namespaces

    def register_kind(self, model: type[Resource], *, defaulter: Defaulter | None = None) -> None:
        self.store.register_kind(model, defaulter=defaulter)

    def get(self, kind: type[R], namespace: str, name: str) -> R:
        return self.store.get(kind, namespace, name)

    def list(
        self, kind: type[R], namespace: str | None = None, label_selector: SelectorLike = None
    ) -> builtins.list[R]:
        found: builtins.list[R] = []
        for each in self._each(namespace):
            found.extend(self.store.list(kind, each, label_selector))
        return found

    def names(
        self, kind: type[Resource], namespace: str, label_selector: SelectorLike = None
    ) -> builtins.list[str]:
        return self.store.names(kind, namespace, label_selector)

    def phase(self, kind: type[Resource], namespace: str, name: str) -> str:
        return self.store.phase(kind, namespace, name)

    def create(self, obj: R, *, admit: bool = True) -> R:
        return self.store.create(obj, admit=admit)

    def update(self, obj: R, *, admit: bool = True) -> R:
        return self.store.update(obj, admit=admit)

    def update_status(self, obj: R) -> R:
        return self.store.update_status(obj)

    def update_status_data(
        self,
        kind: type[R],
        namespace: str,
        name: str,
        status: Mapping[str, Any] | None,
        *,
        resource_version: str = "",
        uid: str = "",
        base: R | None = None,
    ) -> R:
        return self.store.update_status_data(
            kind, namespace, name, status, resource_version=resource_version, uid=uid, base=base
        )

    def bind(
        self, namespace: str, name: str, node_name: str, *, uid: str = "", base: Pod | None = None
    ) -> Pod:
        return self.store.bind(namespace, name, node_name, uid=uid, base=base)

    def delete(
        self,
        kind: type[R],
        namespace: str,
        name: str,
        *,
        force: bool = False,
        resource_version: str = "",
    ) -> R:
        return self.store.delete(
            kind, namespace, name, force=force, resource_version=resource_version
        )

    def apply(self, objects: Sequence[Resource]) -> builtins.list[ApplyResult]:
        return self.store.apply(objects)

    def transaction(self) -> AbstractContextManager[None]:
        return self.store.transaction()

    def resource_version(self) -> int:
        return self.store.resource_version()

    def events_since(
        self,
        since_rv: int,
        *,
        kinds: Iterable[type[Resource]] | None = None,
        namespace: str | None = None,
        limit: int | None = None,
    ) -> builtins.list[WatchEvent]:
        wanted = None if kinds is None else tuple(kinds)
        found: builtins.list[WatchEvent] = []
        for each in self._each(namespace):
            found.extend(self.store.events_since(since_rv, kinds=wanted, namespace=each))
        found.sort(key=lambda event: event.resource_version)
        return found[:limit] if limit is not None else found

    def poll_events(
        self, since_rv: int, kinds: Iterable[type[Resource]]
    ) -> tuple[builtins.list[WatchEvent], int]:
        """The store's poll (KubeStore: its informer's, from memory), other namespaces'
        events dropped; the resume point is the store's."""
        found, resume = self.store.poll_events(since_rv, kinds)
        if self.namespaces:
            found = [event for event in found if event.namespace in self.namespaces]
        return found, resume

    def wait(self, since_rv: int, timeout: float) -> bool:
        return self.store.wait(since_rv, timeout)

    def watch(
        self,
        kinds: Iterable[type[Resource]] | None = None,
        *,
        namespace: str | None = None,
        since_rv: int | None = None,
        timeout: float | None = None,
    ) -> Iterator[WatchEvent]:
        for event in self.store.watch(
            kinds, namespace=namespace, since_rv=since_rv, timeout=timeout
        ):
            if self._in_scope(event.namespace):
                yield event

    def close(self) -> None:
        self.store.close()
