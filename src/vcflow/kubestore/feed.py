"""The `Feed` side of `store.KubeStore`, its base class (`base.Feed`: resource_version,
events_since, poll_events, wait, watch): the events come from the informer's persistent
watch streams (`informer`), else from one-off streams (`watching`), and, with the store's
`namespaces`, those of other namespaces are dropped.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence

from vcflow.api.jobflow import JobFlow
from vcflow.api.meta import Resource
from vcflow.kubestore import watching
from vcflow.kubestore.calls import Calls
from vcflow.store.base import Cursor, Expired, WatchEvent

#: seconds a kind's one-off stream may stay silent before it is taken as caught up (reads
#: from before the persistent watches began)
CATCH_UP_IDLE = 0.5


class Feed:
    """The store's events (see the module docstring): its requests (`calls`: the client,
    the informer, the kinds) and the namespaces in scope (none: all; each once)."""

    def __init__(self, calls: Calls, namespaces: Sequence[str]) -> None:
        self.calls, self.namespaces = calls, tuple(dict.fromkeys(namespaces))

    def resource_version(self) -> int:
        """The server's current resourceVersion: a one-item list's (store-wide in
        Kubernetes too: etcd's revision)."""
        info, resource = self.calls.kind(JobFlow)
        page = self.calls.call(info, "GET", resource.path(None), query=[("limit", "1")]).json()
        return int((page.get("metadata") or {}).get("resourceVersion") or 0)

    def _in_scope(self, events: list[WatchEvent]) -> list[WatchEvent]:
        """`events` but those of namespaces out of scope (`namespaces`); a cluster-scoped
        object's (namespace `""`: a Queue) is in every scope."""
        if not self.namespaces:
            return events
        return [event for event in events if self._in(event)]

    def _in(self, event: WatchEvent) -> bool:
        return not self.namespaces or not event.namespace or event.namespace in self.namespaces

    def events_since(
        self,
        since_rv: int,
        *,
        kinds: Iterable[type[Resource]] | None = None,
        namespace: str | None = None,
        limit: int | None = None,
    ) -> list[WatchEvent]:
        """The events after `since_rv` up to the server's current resourceVersion, from the
        persistent watches (`informer`; a kind whose stream stays silent CATCH_UP_IDLE
        seconds is taken as caught up), else from streams of their own when the watches do
        not reach back that far. `poll_events` is the watchers' cheaper read."""
        watched = self.calls.watched(kinds)
        latest = self.resource_version()
        if since_rv > latest:
            raise Expired(
                f"resourceVersion {since_rv} is newer than the store's ({latest}): list "
                "again and watch from the current resourceVersion"
            )
        found = self.calls.informer.events(
            watched, since_rv, namespace, latest=latest, idle=CATCH_UP_IDLE
        )
        if found is None:
            found, _ = self._caught_up(since_rv, watched, namespace)
        found = self._in_scope(found)
        return found[:limit] if limit is not None else found

    def _caught_up(
        self, since_rv: int, watched: Sequence[watching.Watched], namespace: str | None
    ) -> tuple[list[WatchEvent], int]:
        """The events after `since_rv` read from one-off streams (`watching.catch_up`)."""
        latest = self.resource_version()
        if since_rv > latest:
            raise Expired(
                f"resourceVersion {since_rv} is newer than the store's ({latest}): list "
                "again and watch from the current resourceVersion"
            )
        if since_rv == latest:
            return [], latest
        found = watching.catch_up(
            self.calls.client, watched, namespace, since_rv, latest, idle=CATCH_UP_IDLE
        )
        return found, latest

    def poll_events(
        self, cursor: Cursor, kinds: Iterable[type[Resource]]
    ) -> tuple[list[WatchEvent], Cursor]:
        """What arrived on the persistent watches of `kinds` after `cursor` (the store's own
        writes waited for, no request made), as an informer sees it: another client's
        write comes when its event does. Where a watch does not reach back that far, the
        events are read from one-off streams, from the earliest of the kinds' positions."""
        watched = self.calls.watched(kinds)
        polled = self.calls.informer.poll(watched, cursor, own_writes=not self.calls.cached)
        if polled is not None:
            return self._in_scope(polled[0]), polled[1]
        start = min(cursor.position(w.info.model) for w in watched)
        found, latest = self._caught_up(start, watched, None)
        found = [e for e in found if e.resource_version > cursor.position(e.model)]
        return self._in_scope(found), cursor.past(found, latest)

    def wait(self, cursor: Cursor, timeout: float) -> bool:
        """True once an event after `cursor` arrives on the persistent watches (of the kinds
        read so far; every kind when none was), or this store wrote after it; False after
        `timeout`."""
        return self.calls.informer.wait(self.calls.watched(None), cursor, timeout)

    def watch(
        self,
        kinds: Iterable[type[Resource]] | None = None,
        *,
        namespace: str | None = None,
        since_rv: int | None = None,
        timeout: float | None = None,
    ) -> Iterator[WatchEvent]:
        rv = self.resource_version() if since_rv is None else since_rv
        if timeout == 0:
            yield from self.events_since(rv, kinds=kinds, namespace=namespace)
            return
        for event in watching.follow(
            self.calls.client, self.calls.watched(kinds), namespace, rv, timeout
        ):
            if self._in(event):
                yield event
