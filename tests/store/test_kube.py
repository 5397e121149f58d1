"""The Kubernetes-API store where it differs from the embedded ones: 410 Gone as Expired,
401 and a refused connection as one line, transactions that group nothing, and a status
write through the subresource that leaves the spec alone. Over `vcflow server`'s app."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from vcflow.api.clock import FakeClock
from vcflow.api.errors import Conflict
from vcflow.api.vcjob import VCJob
from vcflow.kubestore import KubeClient, KubeStore, Unauthorized, Unreachable
from vcflow.store import Expired, MemoryStore

from .conftest import make_store, vcjob
from .kubeserver import KubeBackend


def test_a_compacted_resource_version_is_expired(tmp_path: Path, clock: FakeClock) -> None:
    with make_store("kube", tmp_path, clock, event_retention=10) as store:
        for i in range(30):
            store.create(vcjob(f"j{i}"))
        with pytest.raises(Expired, match="too old resource version"):
            store.events_since(3)
        assert [e.resource_version for e in store.events_since(27)] == [28, 29, 30]


def test_without_the_token_is_unauthorized() -> None:
    with KubeBackend(MemoryStore(), token="s3cret") as store:
        anonymous = KubeStore(KubeClient.for_url(store.url))
        with pytest.raises(Unauthorized, match=r"must be logged in to the server \(Unauthorized\)"):
            anonymous.list(VCJob)
        assert store.list(VCJob) == []  # (the store itself has the token)


def test_a_refused_connection_is_one_line_naming_the_url() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]  # nothing listens there once closed
    store = KubeStore(KubeClient.for_url(f"http://127.0.0.1:{port}"))
    with pytest.raises(Unreachable) as caught:
        store.get(VCJob, "default", "a")
    message = str(caught.value)
    assert f"127.0.0.1:{port} was refused" in message and "\n" not in message


def test_a_status_write_leaves_the_spec_and_a_stale_one_conflicts(
    tmp_path: Path, clock: FakeClock
) -> None:
    with make_store("kube", tmp_path, clock) as store:
        created = store.create(vcjob("a"))
        store.update_status_data(VCJob, "default", "a", {"state": {"phase": "Running"}})
        written = store.get(VCJob, "default", "a")
        assert written.phase == "Running" and written.spec == created.spec
        with pytest.raises(Conflict, match=r"Error from server \(Conflict\): Operation cannot"):
            store.update_status_data(
                VCJob,
                "default",
                "a",
                {"state": {"phase": "Failed"}},
                resource_version=created.metadata.resource_version,
            )
