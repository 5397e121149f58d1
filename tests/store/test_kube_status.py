"""Status writes over the Kubernetes API are JSON merge patches of the status subresource
holding the status alone (never the spec, never a PUT of the object), so a concurrent
spec or metadata write makes no status write fail; the controllers' vcjobs go out with a
controller ownerReference that blocks the owner's deletion. Over `vcflow server`'s app."""

from __future__ import annotations

from pathlib import Path

import pytest

from vcflow.api.clock import FakeClock
from vcflow.api.errors import Conflict
from vcflow.api.jobflow import JobFlow
from vcflow.api.vcjob import VCJob
from vcflow.controller.manager import Manager
from vcflow.kubestore import KubeStore
from vcflow.kubestore.client import MERGE_PATCH

from .conftest import flow, make_store, template, vcjob
from .kuberecording import Recorded, Sent


def _kube(tmp_path: Path, clock: FakeClock) -> KubeStore:
    return make_store("kube", tmp_path, clock)  # type: ignore[return-value]


def _assert_status_only(sent: Sent) -> None:
    assert (sent.method, sent.content_type) == ("PATCH", MERGE_PATCH), sent
    assert set(sent.body) <= {"status", "metadata"}, sent.body
    assert set(sent.body.get("metadata", {})) <= {"resourceVersion", "uid"}, sent.body


def test_status_writes_send_only_the_status_as_a_merge_patch(
    tmp_path: Path, clock: FakeClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    with _kube(tmp_path, clock) as store:
        recorded = Recorded(store, monkeypatch)
        created = store.create(vcjob("a"))
        running = store.update_status_data(
            VCJob, "default", "a", {"state": {"phase": "Running"}, "running": 1}, base=created
        )
        store.update_status_data(
            VCJob,
            "default",
            "a",
            {"state": {"phase": "Completed"}},
            resource_version=running.metadata.resource_version,
            base=running,
        )
        again = store.get(VCJob, "default", "a")
        again.metadata.labels = {"ignored": "yes"}
        store.update_status(again)  # unchanged: nothing written
        writes = recorded.status_writes()
        assert len(writes) == 2
        for sent in writes:
            _assert_status_only(sent)
        # the second is the change alone, "running" removed, pinned to the version it saw
        assert writes[1].body == {
            "status": {"state": {"phase": "Completed"}, "running": None},
            "metadata": {"resourceVersion": running.metadata.resource_version},
        }
        stored = store.get(VCJob, "default", "a")
        assert stored.to_dict()["status"] == {"state": {"phase": "Completed"}}
        assert stored.spec == created.spec and not stored.metadata.labels


def test_a_concurrent_spec_write_does_not_fail_a_status_write(
    tmp_path: Path, clock: FakeClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Before every status write goes out, someone else updates the vcjob's spec: the status
    write still succeeds at once, and keeps their spec (a PUT of the object read before would
    conflict every time, or overwrite it)."""
    with _kube(tmp_path, clock) as store:
        created = store.create(vcjob("a"))
        recorded = Recorded(store, monkeypatch)
        writer = _SpecWriter(store)
        recorded.before = writer
        written = store.update_status_data(
            VCJob, "default", "a", {"state": {"phase": "Running"}}, uid=created.metadata.uid
        )
        written = store.update_status_data(
            VCJob, "default", "a", {"state": {"phase": "Completed"}}, base=written
        )
        assert writer.edits == 2
        stored = store.get(VCJob, "default", "a")
        assert stored.phase == "Completed"
        assert stored.spec is not None and stored.spec.max_retry == 3  # theirs, kept
        assert len(recorded.status_writes()) == 2  # no retry


class _SpecWriter:
    """Updates the vcjob's spec (through the same server) before each status write."""

    def __init__(self, store: KubeStore) -> None:
        self.store = store
        self.edits = 0
        self.busy = False

    def __call__(self, sent: Sent) -> None:
        if self.busy or not sent.path.endswith("/status") or sent.method == "GET":
            return
        self.busy = True
        try:
            current = self.store.get(VCJob, "default", "a")
            assert current.spec is not None
            current.spec.max_retry = 2 + self.edits
            self.store.update(current)
            self.edits += 1
        finally:
            self.busy = False


def test_a_stale_status_write_still_conflicts(tmp_path: Path, clock: FakeClock) -> None:
    with _kube(tmp_path, clock) as store:
        created = store.create(vcjob("a"))
        labelled = created.clone()
        labelled.metadata.labels = {"x": "y"}
        store.update(labelled)
        with pytest.raises(Conflict):
            store.update_status_data(
                VCJob,
                "default",
                "a",
                {"state": {"phase": "Running"}},
                resource_version=created.metadata.resource_version,
                base=created,
            )


def test_the_controllers_vcjobs_block_their_flows_deletion(
    tmp_path: Path, clock: FakeClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    with _kube(tmp_path, clock) as store:
        recorded = Recorded(store, monkeypatch)
        store.create(template("a"))
        created = store.create(flow("f", "a"))
        Manager(store, clock).settle()
        (post,) = [s for s in recorded.sent if s.method == "POST" and s.path.endswith("/jobs")]
        assert post.body["metadata"]["ownerReferences"] == [
            {
                "apiVersion": "flow.volcano.sh/v1alpha1",
                "kind": "JobFlow",
                "name": "f",
                "uid": created.metadata.uid,
                "controller": True,
                "blockOwnerDeletion": True,
            }
        ]
        (job,) = store.list(VCJob)
        assert job.metadata.owner_references[0].block_owner_deletion is True
        for sent in recorded.status_writes():
            _assert_status_only(sent)
        assert store.get(JobFlow, "default", "f").status is not None
