"""The informer's object cache, as client-go's indexer is to a lister: per kind, the latest
state of every object by namespace/name, from an initial list and then the kind's watch
events, each object resourceVersion-ordered (an older state never replaces a newer one).
Kept by `informer` (under its lock), filled with the store's own writes by `calls`.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass

from vcflow.store.base import EventType, Selector, WatchEvent

Key = tuple[str, str]


@dataclass
class Entry:
    """One object: its resourceVersion and JSON (parsed by each reader: no reader can change
    what the next one gets); its labels parsed once, when a selector first asks."""

    rv: int
    data: str
    _labels: dict[str, str] | None = None

    def labels(self) -> dict[str, str]:
        if self._labels is None:
            meta = json.loads(self.data).get("metadata") or {}
            self._labels = dict(meta.get("labels") or {})
        return self._labels


class KindCache:
    """One kind's objects (see the module docstring). `listed`: the initial list's
    resourceVersion; events at or before it are in the list already."""

    def __init__(self, listed: int, items: Iterable[tuple[Key, int, str]]) -> None:
        self.listed = listed
        self.objects: dict[Key, Entry] = {key: Entry(rv, data) for key, rv, data in items}
        #: objects this store deleted, by the delete's resourceVersion, until the watch's
        #: DELETED comes (a later event of the old object must not bring it back)
        self.gone: dict[Key, int] = {}

    def event(self, event: WatchEvent) -> None:
        if event.resource_version <= self.listed:
            return
        key = (event.namespace, event.name)
        if event.type is EventType.DELETED:
            self.gone.pop(key, None)
            held = self.objects.get(key)
            if held is not None and held.rv <= event.resource_version:
                del self.objects[key]
            return
        self.put(key, event.resource_version, event.raw)

    def put(self, key: Key, rv: int, data: str) -> None:
        """A state of the object (an event, or the answer to this store's write), kept if
        it is newer than the one held."""
        if rv <= self.gone.get(key, 0):
            return
        self.gone.pop(key, None)
        held = self.objects.get(key)
        if held is None or held.rv < rv:
            self.objects[key] = Entry(rv, data)

    def remove(self, key: Key, rv: int) -> None:
        """This store deleted the object (answered with resourceVersion `rv`)."""
        held = self.objects.get(key)
        if held is None or held.rv <= rv:
            self.objects.pop(key, None)
            self.gone[key] = max(rv, self.gone.get(key, 0))

    def removed(self, key: Key, uid: str) -> None:
        """This store deleted the object and the server answered no resourceVersion (a
        Status): the held state of that uid (any, without one) leaves the cache, kept out
        up to its own resourceVersion — a later state of it (the watch lagging) comes back
        until the watch's DELETED removes it."""
        held = self.objects.get(key)
        if held is None:
            return
        if uid and (json.loads(held.data).get("metadata") or {}).get("uid") != uid:
            return  # (one created again since: not the one deleted)
        self.remove(key, held.rv)

    def get(self, namespace: str, name: str) -> str | None:
        entry = self.objects.get((namespace, name))
        return entry.data if entry is not None else None

    def list(self, namespace: str | None, selector: Selector) -> list[tuple[Key, str]]:
        """The objects of `namespace` (None: all) matching `selector`, by (namespace, name)."""
        found = [
            (key, entry.data)
            for key, entry in self.objects.items()
            if (namespace is None or key[0] == namespace)
            and (not selector.requirements or selector.matches(entry.labels()))
        ]
        found.sort(key=lambda item: item[0])
        return found
