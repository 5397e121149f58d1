"""A list-then-watch of the raw objects a label selector picks, in all namespaces, as an
informer does it: list page by page, watch from the list's resourceVersion, list again on
410 (Expired), reopen a stream that went silent, back off on errors. For the operator's
side watches that need no cache or model (pods to label, PodGroups' notes): `run` hands
every event to its caller, from its own thread, until `stopped` is set.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from vcflow.api.errors import NotFound, VcflowError
from vcflow.kubeapi import watchframes
from vcflow.kubestore import status as statuses
from vcflow.kubestore.client import KubeClient
from vcflow.kubestore.watching import READ_TIMEOUT, STREAM_SECONDS
from vcflow.store.base import Expired

#: seconds before the next try after an error: the first, and the most (doubled between)
BACKOFF = (0.5, 30.0)
#: objects a list page asks for
PAGE = 500

Deliver = Callable[[str, dict[str, Any]], None]


@dataclass
class SelectorWatch:
    """The objects at `path` (a cluster-wide URL) that `selector` picks; `kind` names them
    in errors, `log` and `what` in its warnings."""

    client: KubeClient
    path: str
    selector: str
    kind: str
    log: logging.Logger
    what: str

    def run(
        self, deliver: Deliver, stopped: threading.Event, *, missing_ends: bool = False
    ) -> None:
        """Deliver `ADDED` for each listed object, then each watch event, until `stopped`.
        With `missing_ends`, NotFound (the API serves no such resource) is raised to the
        caller; else it is an error like any other, tried again after a pause."""
        rv, backoff = "", BACKOFF[0]
        while not stopped.is_set():
            try:
                if not rv:
                    found, rv = self.list()
                    for obj in found:
                        deliver("ADDED", obj)
                for type_, obj in self.stream(rv):
                    if stopped.is_set():
                        return
                    rv = str((obj.get("metadata") or {}).get("resourceVersion") or rv)
                    if type_ in ("ADDED", "MODIFIED", "DELETED"):
                        deliver(type_, obj)
                backoff = BACKOFF[0]
                continue
            except Expired:
                rv = ""  # (410: list again, watch from there)
                continue
            except TimeoutError:
                continue  # silent for READ_TIMEOUT: reopened from where it was
            except NotFound as exc:
                if missing_ends:
                    raise
                self.log.warning("%s: %s; again in %gs", self.what, exc, backoff)
            except (VcflowError, ValueError) as exc:  # (ValueError: a frame not JSON)
                self.log.warning("%s: %s; again in %gs", self.what, exc, backoff)
            except Exception:  # (a surprise must not end the watch silently)
                self.log.exception("%s; again in %gs", self.what, backoff)
            stopped.wait(backoff)
            backoff = min(BACKOFF[1], backoff * 2)

    def list(self) -> tuple[list[dict[str, Any]], str]:
        """Every object the selector picks, page by page, and the list's resourceVersion."""
        items: list[dict[str, Any]] = []
        token, rv = "", ""
        while True:
            query = [("labelSelector", self.selector), ("limit", str(PAGE))]
            if token:
                query.append(("continue", token))
            response = self.client.request("GET", self.path, query=query)
            if not response.ok:
                raise statuses.error_for(response, kind=self.kind)
            page = response.json()
            items.extend(i for i in page.get("items") or () if isinstance(i, dict))
            meta = page.get("metadata") or {}
            rv = rv or str(meta.get("resourceVersion") or "")
            token = str(meta.get("continue") or "")
            if not token:
                return items, rv

    def stream(self, rv: str) -> Iterator[tuple[str, dict[str, Any]]]:
        """The watch from `rv`, one (type, object) a frame; bookmarks move `rv` on."""
        query = [
            ("labelSelector", self.selector),
            ("watch", "true"),
            ("resourceVersion", rv),
            ("allowWatchBookmarks", "true"),
            ("timeoutSeconds", str(STREAM_SECONDS)),
        ]
        with self.client.stream(self.path, query=query, timeout=READ_TIMEOUT) as (head, lines):
            if not head.ok:
                raise statuses.error_for(head, kind=self.kind)
            for line in lines:
                frame = watchframes.decode(line)
                if frame is not None:
                    yield frame.type, frame.object
