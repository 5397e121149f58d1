"""A `KubeStore` whose requests are recorded (method, path, content type, body), with an
optional hook run before each one: what the kube-specific tests assert the store sends."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest

from vcflow.kubestore import KubeStore
from vcflow.kubestore.client import JSON, Response


@dataclass(frozen=True)
class Sent:
    method: str
    path: str
    content_type: str
    body: Any


class Recorded:
    """The requests `store` sends from now on (`sent`); `before(sent)` runs before each."""

    def __init__(self, store: KubeStore, monkeypatch: pytest.MonkeyPatch) -> None:
        self.sent: list[Sent] = []
        self.before: Callable[[Sent], None] = lambda _sent: None
        request = store.client.request

        def recording(method: str, path: str, **kwargs: Any) -> Response:
            sent = Sent(method, path, kwargs.get("content_type", JSON), kwargs.get("body"))
            self.before(sent)
            self.sent.append(sent)
            return request(method, path, **kwargs)

        monkeypatch.setattr(store.client, "request", recording)

    def status_writes(self) -> list[Sent]:
        return [s for s in self.sent if s.path.endswith("/status") and s.method != "GET"]
