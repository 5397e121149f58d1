"""The contract suite's "kube" backend: `vcflow server`'s application (`server.app`) on a
real loopback socket, in a thread of the test process, around a fresh engine store that
takes the test's clock and options, and a `KubeStore` talking to it over HTTP with the
official client. One server per test: each test starts from resourceVersion 0, as on the
other backends (a shared server would make every resourceVersion and list differ)."""

from __future__ import annotations

import socket
import threading
import time
from typing import Any

import uvicorn

from vcflow.kubestore import KubeClient, KubeStore
from vcflow.server.app import create_app
from vcflow.store.engine import StoreEngine


class Served:
    """`app` served on 127.0.0.1 on a free port until `stop`."""

    def __init__(self, app: Any) -> None:
        self._socket = socket.socket()
        self._socket.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)  # (see below)
        self._socket.bind(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self._socket.getsockname()[1]}"
        config = uvicorn.Config(app, log_level="warning", lifespan="off")
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(
            target=self._server.run, kwargs={"sockets": [self._socket]}, daemon=True
        )
        self._thread.start()
        deadline = time.monotonic() + 10
        while not self._server.started:
            if time.monotonic() > deadline or not self._thread.is_alive():
                raise RuntimeError("the test server did not start")
            time.sleep(0.01)

    def stop(self) -> None:
        self._server.should_exit = True
        self._thread.join(10)
        self._socket.close()


class KubeBackend:
    """A context manager: the KubeStore of a fresh server around `engine`."""

    def __init__(self, engine: StoreEngine, token: str | None = None) -> None:
        self.engine = engine
        self.stopping = threading.Event()  # ends the server's watch streams at once
        self.served = Served(create_app(engine, token=token, stopping=self.stopping))
        self.store = KubeStore(KubeClient.for_url(self.served.url, token=token, timeout=10))

    def __enter__(self) -> KubeStore:
        return self.store

    def __exit__(self, *exc_info: object) -> None:
        self.store.close()
        self.stopping.set()
        self.served.stop()
        self.engine.close()
