"""A kind's requests to the Kubernetes API, for `store.KubeStore` and `applying`: which API
resource a store kind is, one request and what its answer means for the informer (the
resourceVersion a write waits for; with `cached_reads`, the object put into the cache or,
after a 409, re-read into it), the cached reads, the direct reads of the objects as the
server sends them (one, or every page of a list), and the API's objects as vcflow's models.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any, TypeVar, cast

from vcflow.api import clusterscope
from vcflow.api import names as apinames
from vcflow.api.errors import AlreadyExists, Conflict, FieldError, NotFound, StoreError
from vcflow.api.event import Event
from vcflow.api.meta import Resource
from vcflow.kubeapi import resources, warningtext
from vcflow.kubestore import eventsapi, watching
from vcflow.kubestore import status as statuses
from vcflow.kubestore.cache import KindCache
from vcflow.kubestore.client import KubeClient, Response
from vcflow.kubestore.informer import Informer, Listed
from vcflow.store import wire
from vcflow.store.base import (
    Expired,
    KindInfo,
    KindRegistry,
    Selector,
    SelectorLike,
    UnknownKind,
)

#: objects per list page (`limit`; the rest through `continue`)
PAGE = 500
T = TypeVar("T")


class Calls:
    """The requests of `KubeStore` (see the module docstring): its client, kinds, informer
    and the kinds it answers from the informer's cache (`cached`), shared with it."""

    def __init__(
        self,
        client: KubeClient,
        kinds: KindRegistry,
        informer: Informer,
        cached: frozenset[type[Resource]],
    ) -> None:
        self.client, self.kinds, self.informer, self.cached = client, kinds, informer, cached

    # --- kinds and paths ----------------------------------------------------------------

    def resource(self, info: KindInfo) -> resources.APIResource:
        if info.model is Event:
            return resources.EVENTS_V1  # (the events API; `eventsapi` converts)
        try:
            return resources.of_model(info.model)
        except KeyError:
            raise UnknownKind(
                f'the Kubernetes API store serves no kind "{info.kind}" ({info.api_version})'
            ) from None

    def kind(self, model: type[Resource]) -> tuple[KindInfo, resources.APIResource]:
        info = self.kinds.of_model(model)
        return info, self.resource(info)

    def watched(self, kinds: Iterable[type[Resource]] | None) -> list[watching.Watched]:
        """The kinds to watch (None: every kind the API serves)."""
        if kinds is None:
            infos = [i for i in self.kinds.all() if _served(i)]
        else:
            infos = [self.kinds.of_model(k) for k in kinds]
        return [
            watching.Watched(i, self.resource(i), eventsapi.incoming if i.model is Event else None)
            for i in infos
        ]

    def call(
        self,
        info: KindInfo,
        method: str,
        path: str,
        *,
        namespace: str = "",
        name: str = "",
        query: Sequence[tuple[str, str]] = (),
        body: Any = None,
        content_type: str = "application/json",
    ) -> Response:
        """One request; an error answer raised as the store's error for it."""
        response = self.client.request(
            method, path, query=query, body=body, content_type=content_type
        )
        written = method != "GET" and ("dryRun", "All") not in query
        if not response.ok:
            error = statuses.error_for(response, kind=info.kind, namespace=namespace, name=name)
            if written and isinstance(error, AlreadyExists | Conflict) and name:
                self._refresh(info, namespace or apinames.DEFAULT_NAMESPACE, name)
            raise error
        if written:
            self._wrote(info, response, deleted=method == "DELETE")
        return response

    def _wrote(self, info: KindInfo, response: Response, *, deleted: bool = False) -> None:
        """Note the resourceVersion of a write, so reads wait for its watch event, and put
        the object written in the cache (a deleted one out of it, unless finalizers hold
        it)."""
        data = response.json() if response.data else None
        meta = data.get("metadata") if isinstance(data, dict) else None
        rv = meta.get("resourceVersion") if isinstance(meta, dict) else None
        if not (isinstance(rv, str) and rv.isdigit()):
            return
        self.informer.wrote(info.model, int(rv))
        if info.model in self.cached and isinstance(data, dict) and isinstance(meta, dict):
            key = (str(meta.get("namespace") or ""), str(meta.get("name") or ""))
            if deleted and not (meta.get("deletionTimestamp") and meta.get("finalizers")):
                self.informer.remove(info.model, key, int(rv))
            else:
                self.informer.put(info.model, key, int(rv), self._wire(info, data))

    def _refresh(self, info: KindInfo, namespace: str, name: str) -> None:
        """Re-read an object directly into the cache after a write the server refused as
        stale (409), so the caller's next read sees what the server holds."""
        if info.model not in self.cached:
            return
        path = self.resource(info).path(namespace, name)
        response = self.client.request("GET", path)
        if response.ok:
            data = response.json()
            rv = int((data.get("metadata") or {}).get("resourceVersion") or 0)
            self.informer.put(info.model, (namespace, name), rv, self._wire(info, data))

    @staticmethod
    def _wire(info: KindInfo, data: dict[str, Any]) -> str:
        """An object of the API as the cache keeps it (JSON, apiVersion and kind set)."""
        data.setdefault("apiVersion", info.api_version)
        data.setdefault("kind", info.kind)
        return wire.dumps(data)

    # --- cached reads -------------------------------------------------------------------

    def _lister(self, info: KindInfo) -> Callable[[], Listed]:
        """The cache's initial list of a kind: every namespace, directly."""

        def listed() -> Listed:
            items, rv = self.list_data(info, None, None)
            return [
                (
                    (str(item["metadata"].get("namespace") or ""), str(item["metadata"]["name"])),
                    int(item["metadata"].get("resourceVersion") or 0),
                    self._wire(info, item),
                )
                for item in items
            ], rv

        return listed

    def _from_cache(self, info: KindInfo, fn: Callable[[KindCache], T]) -> T:
        return self.informer.read(self.watched([info.model])[0], self._lister(info), fn)

    def cached_get(self, info: KindInfo, namespace: str, name: str) -> str:
        """The cached object's JSON; NotFound as the API server says it."""
        namespace = clusterscope.scoped(info.model, namespace)  # (cached under "")
        found = self._from_cache(info, lambda cache: cache.get(namespace, name))
        if found is None:
            resource = self.resource(info)
            qualified = f"{resource.plural}.{resource.group}" if resource.group else resource.plural
            raise NotFound(f'{qualified} "{name}" not found')
        return found

    def cached_list(
        self, info: KindInfo, namespace: str | None, label_selector: SelectorLike
    ) -> list[tuple[tuple[str, str], str]]:
        selector = Selector.coerce(label_selector)
        if clusterscope.is_cluster_scoped(info.model):
            namespace = None
        return self._from_cache(info, lambda cache: cache.list(namespace, selector))

    # --- direct reads -------------------------------------------------------------------

    def model(self, info: KindInfo, data: Any) -> Resource:
        """An object of the API as the kind's model (an Event from the events API's shape)."""
        if info.model is Event and isinstance(data, dict):
            data = eventsapi.incoming(data)
        if isinstance(data, dict):
            data.setdefault("apiVersion", info.api_version)
            data.setdefault("kind", info.kind)
        return info.model.model_validate(data)

    def get_data(self, info: KindInfo, namespace: str, name: str) -> dict[str, Any]:
        path = self.resource(info).path(namespace, name)
        found = self.call(info, "GET", path, namespace=namespace, name=name).json()
        return cast(dict[str, Any], found)

    def list_data(
        self, info: KindInfo, namespace: str | None, label_selector: SelectorLike
    ) -> tuple[list[dict[str, Any]], int]:
        """Every item (all pages), sorted by (namespace, name), and the list's rv."""
        selector = str(Selector.coerce(label_selector))
        path = self.resource(info).path(namespace)
        for _ in range(3):  # a continue token that expired midway: start again
            items: list[dict[str, Any]] = []
            token, rv = "", 0
            try:
                while True:
                    query = [("limit", str(PAGE))]
                    if selector:
                        query.append(("labelSelector", selector))
                    if token:
                        query.append(("continue", token))
                    page = self.call(info, "GET", path, query=query).json()
                    items.extend(page.get("items") or [])
                    meta = page.get("metadata") or {}
                    rv = rv or int(meta.get("resourceVersion") or 0)
                    token = str(meta.get("continue") or "")
                    if not token:
                        break
            except Expired:
                if token:
                    continue
                raise
            items.sort(key=_sort_key)
            return items, rv
        raise StoreError(f"listing {info.kind}: the list changed too fast to page through")


def warnings(
    info: KindInfo, response: Response, namespace: str, name: str
) -> tuple[FieldError, ...]:
    """The admission warnings of a write (its `Warning` headers) as FieldErrors."""
    return tuple(
        warningtext.heard(w, kind=info.kind, namespace=namespace, name=name)
        for w in response.warnings
    )


def _served(info: KindInfo) -> bool:
    try:
        resources.of_model(info.model)
    except KeyError:
        return False
    return True


def _sort_key(item: dict[str, Any]) -> tuple[str, str]:
    meta = item.get("metadata") or {}
    return str(meta.get("namespace") or ""), str(meta.get("name") or "")
