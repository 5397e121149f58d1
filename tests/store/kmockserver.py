"""The contract suite's "kmock" backend: kmock's `KubernetesEmulator` (an in-memory
Kubernetes API emulator for operator tests) serving the resources of `kubeapi/resources.py` on
a loopback socket, on its own event loop in a thread of the test process, and a
`KubeStore` talking to it over HTTP with the official client. One emulator per test."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import kmock

from vcflow.kubeapi import resources
from vcflow.kubestore import KubeClient, KubeStore

#: seconds to start or stop the emulator
START = 10.0


def declare(emulator: Any) -> None:
    """Declare every resource vcflow serves, as a CRD or the built-in API would."""
    for resource in resources.ALL:
        key = f"{resource.group}/{resource.version}/{resource.plural}".lstrip("/")
        emulator.resources[key] = kmock.ResourceInfo(
            kind=resource.kind,
            singular=resource.singular,
            namespaced=resource.namespaced,
            verbs=set(resources.VERBS),
            shortnames=set(resource.short_names),
            subresources=set(resource.subresources),
        )


class KmockBackend:
    """A context manager: the KubeStore of a fresh emulator."""

    def __init__(self) -> None:
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._thread.start()
        try:
            self.emulator, self._server = self._run(self._start())
        except BaseException:
            self._end_loop()
            raise
        url = str(self._server.url).rstrip("/")
        self.store = KubeStore(KubeClient.for_url(url, timeout=10))

    def _run(self, coroutine: Any) -> Any:
        return asyncio.run_coroutine_threadsafe(coroutine, self._loop).result(START)

    async def _start(self) -> tuple[Any, Any]:
        emulator = kmock.KubernetesEmulator()
        declare(emulator)
        await emulator.__aenter__()
        server = kmock.Server(emulator)
        await server.__aenter__()
        return emulator, server

    async def _stop(self) -> None:
        await self._server.__aexit__(None, None, None)
        await self.emulator.__aexit__(None, None, None)
        # (what the emulator leaves running — its open watch streams — ends here, on its
        # own loop, before the loop closes)
        others = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
        for task in others:
            task.cancel()
        await asyncio.gather(*others, return_exceptions=True)
        await self._loop.shutdown_asyncgens()

    def _end_loop(self) -> None:
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(START)
        self._loop.close()

    def __enter__(self) -> KubeStore:
        return self.store

    def __exit__(self, *exc_info: object) -> None:
        self.store.close()
        try:
            self._run(self._stop())
        finally:
            self._end_loop()
