"""`KubeStore.delete`'s answer when the server answers a custom resource's DELETE with a
Status, as kube-apiserver does: the name, namespace and uid the Status gives, and no state
(no phase: a caller must not read the deleted vcjob's outcome from it); the object when the
server returns it (a Pod). Over `vcflow server`'s app."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from tests.store.conftest import vcjob
from tests.store.kubeserver import KubeBackend

from vcflow.api.clock import FakeClock
from vcflow.api.pod import Pod
from vcflow.api.vcjob import VCJob, VCJobStatus
from vcflow.kubestore import KubeStore
from vcflow.store import MemoryStore


@pytest.fixture
def store() -> Iterator[KubeStore]:
    with KubeBackend(MemoryStore(clock=FakeClock())) as found:
        yield found


def test_a_vcjob_deleted_answers_its_uid_and_no_state(store: KubeStore) -> None:
    made = store.create(vcjob("j"))
    made.status = VCJobStatus.from_dict({"state": {"phase": "Completed"}})
    store.update_status(made)
    gone = store.delete(VCJob, "default", "j", force=True)
    assert (gone.namespace, gone.name, gone.metadata.uid) == ("default", "j", made.metadata.uid)
    assert gone.phase == "" and not gone.metadata.resource_version


def test_a_pod_deleted_answers_the_pod(store: KubeStore) -> None:
    pod = Pod.from_dict(
        {
            "metadata": {"name": "p", "namespace": "default"},
            "spec": {"containers": [{"name": "c", "image": "x"}]},
        }
    )
    made = store.create(pod)
    gone = store.delete(Pod, "default", "p", force=True)
    assert gone.metadata.uid == made.metadata.uid and gone.metadata.resource_version
