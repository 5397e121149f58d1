"""A KubeStore limited to some namespaces (the operator's `--namespaces`) still sees
cluster-scoped objects — a Queue is in no namespace, so in every scope: lists, gets and
watch events — against a real `vcflow server` app."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from tests.store.kubeserver import KubeBackend

from vcflow.api.scheduling import Queue
from vcflow.kubestore import KubeClient, KubeStore
from vcflow.store import MemoryStore

QUEUE = {
    "apiVersion": "scheduling.volcano.sh/v1beta1",
    "kind": "Queue",
    "metadata": {"name": "team-a"},
    "spec": {"weight": 2},
}


@pytest.fixture
def served() -> Iterator[KubeBackend]:
    backend = KubeBackend(MemoryStore())
    with backend:
        yield backend


def test_a_namespace_limited_store_sees_queues(served: KubeBackend) -> None:
    since = served.store.resource_version()
    served.store.create(Queue.from_dict(QUEUE))
    client = KubeClient.for_url(served.served.url, timeout=10)
    with KubeStore(client, namespaces=("ns1", "ns2")) as limited:
        assert [q.name for q in limited.list(Queue)] == ["team-a"]
        assert [q.name for q in limited.list(Queue, "ns1")] == ["team-a"]
        assert limited.get(Queue, "ns2", "team-a").weight == 2
        events = limited.events_since(since, kinds=[Queue])
        assert [(e.type, e.name, e.namespace) for e in events] == [("ADDED", "team-a", "")]
