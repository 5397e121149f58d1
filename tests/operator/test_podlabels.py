"""The operator's pod labeller (`vcflow.operator.podlabels`): its decision, pure, case by
case; its backlog on a given clock; and the labeller itself against `vcflow server`'s API
app on a real socket (the test's store behind it) — what it patches, what it leaves, that
it asks only for what the operator's role grants, nothing for pods labelled already, and
nothing once stopped. The operator's processes label a flow's pods end to end in
test_pod_labels.py."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any
from urllib.parse import parse_qs

import pytest
from tests.deploy.test_rbac_requests import Recorded, grant_of
from tests.store.kubeserver import Served
from typer.testing import CliRunner

from vcflow.api.errors import NotFound
from vcflow.api.pod import Pod
from vcflow.api.vcjob import VCJob
from vcflow.cli.app import app
from vcflow.kubeapi import permissions
from vcflow.kubestore import KubeClient
from vcflow.operator import process
from vcflow.operator.podgroups import PodGroupNotes
from vcflow.operator.podlabels import (
    SELECTOR,
    Action,
    Backlog,
    JobView,
    PodLabeler,
    decide,
    jobs_of,
    patch_body,
)
from vcflow.server.app import create_app
from vcflow.store import MemoryStore
from vcflow.store.base import Expired, Selector

FLOW = "volcano.sh/createdByJobFlow"
TEMPLATE = "volcano.sh/createdByJobTemplate"
JOB_LABELS = {FLOW: "default.test", TEMPLATE: "default.a"}


def pod(
    name: str = "test-a-t-0",
    job: str = "test-a",
    uid: str = "job-uid",
    *,
    labels: dict[str, str] | None = None,
    owner: dict[str, Any] | None = None,
    namespace: str = "default",
    rv: str = "7",
) -> dict[str, Any]:
    """A pod as Volcano's job controller makes it for vcjob `job` (of `uid`)."""
    ref = {
        "apiVersion": "batch.volcano.sh/v1alpha1",
        "kind": "Job",
        "name": job,
        "uid": uid,
        "controller": True,
        "blockOwnerDeletion": True,
    }
    meta: dict[str, Any] = {
        "name": name,
        "namespace": namespace,
        "uid": f"pod-{name}",
        "resourceVersion": rv,
        "labels": {"volcano.sh/job-name": job, "volcano.sh/task-spec": "t", **(labels or {})},
        "ownerReferences": [ref if owner is None else owner],
    }
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": {}}


FLOW_JOB = JobView("job-uid", JOB_LABELS)


# --- decide ----------------------------------------------------------------------------


def test_a_flows_pod_gets_both_labels_of_its_vcjob() -> None:
    found = decide(pod(), FLOW_JOB)
    assert found.action is Action.PATCH
    assert found.labels == JOB_LABELS


def test_only_the_labels_missing_are_patched() -> None:
    found = decide(pod(labels={TEMPLATE: "default.a"}), FLOW_JOB)
    assert (found.action, found.labels) == (Action.PATCH, {FLOW: "default.test"})
    only_flow = JobView("job-uid", {FLOW: "default.test", "other": "x"})
    found = decide(pod(), only_flow)
    assert (found.action, found.labels) == (Action.PATCH, {FLOW: "default.test"})


def test_a_pod_carrying_the_labels_is_left_alone() -> None:
    assert decide(pod(labels=JOB_LABELS), FLOW_JOB).action is Action.SKIP


@pytest.mark.parametrize(
    "labels",
    [{TEMPLATE: "default.mine"}, {FLOW: "default.other"}, {FLOW: "default.other", TEMPLATE: ""}],
    ids=["template", "flow", "both"],
)
def test_a_label_with_another_value_is_never_overwritten(labels: dict[str, str]) -> None:
    found = decide(pod(labels=labels), FLOW_JOB)
    assert found.action is Action.CONFLICT
    assert found.labels == {k: v for k, v in labels.items()}


def test_the_pods_of_a_vcjob_no_flow_created_are_left_alone() -> None:
    found = decide(pod(), JobView("job-uid", {"app": "mine"}))
    assert (found.action, found.why) == (Action.SKIP, "vcjob test-a was not created by a JobFlow")


@pytest.mark.parametrize(
    "owner",
    [
        {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "test-a", "controller": True},
        {"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job", "name": "test-b"},
        {"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job", "name": "test-a"},
        {"apiVersion": "batch/v1", "kind": "Job", "name": "test-a", "controller": True},
    ],
    ids=["replicaset", "another-vcjob", "not-controller", "batch-v1-job"],
)
def test_a_pod_its_vcjob_does_not_control_is_left_alone(owner: dict[str, Any]) -> None:
    found = decide(pod(owner=owner), FLOW_JOB)
    assert found.action is Action.SKIP
    assert "its controller is not vcjob test-a" in found.why


def test_a_pod_without_the_job_name_label_is_left_alone() -> None:
    bare = pod()
    del bare["metadata"]["labels"]["volcano.sh/job-name"]
    assert decide(bare, FLOW_JOB).action is Action.SKIP


def test_a_vcjob_not_found_or_of_another_uid_is_looked_for_again() -> None:
    assert decide(pod(), None).action is Action.WAIT
    # the cache behind a vcjob of the same name created again, or the pod of an old one
    assert decide(pod(uid="old-uid"), FLOW_JOB).action is Action.WAIT
    assert decide(pod(uid=""), FLOW_JOB).action is Action.WAIT


def test_the_patch_adds_only_the_labels_pinned_to_the_pods_resource_version() -> None:
    assert patch_body(pod(rv="42"), JOB_LABELS) == {
        "metadata": {"labels": JOB_LABELS, "resourceVersion": "42"}
    }


def test_the_watch_selects_volcanos_pods_without_the_flow_label() -> None:
    selector = Selector.parse(SELECTOR)
    assert selector.matches({"volcano.sh/job-name": "j"})
    assert not selector.matches({"volcano.sh/job-name": "j", FLOW: "default.test"})
    assert not selector.matches({"app": "web"})


def test_jobs_of_reads_the_vcjob_uid_and_labels() -> None:
    store = MemoryStore()
    spec = {
        "tasks": [
            {
                "name": "t",
                "replicas": 1,
                "template": {"spec": {"containers": [{"name": "m", "image": "x"}]}},
            }
        ]
    }
    job = store.create(
        VCJob.from_dict({"metadata": {"name": "j", "labels": JOB_LABELS}, "spec": spec})
    )
    find = jobs_of(store)
    assert find("default", "j") == JobView(job.metadata.uid, JOB_LABELS)
    assert find("default", "gone") is None


# --- the backlog ---------------------------------------------------------------------


def test_a_held_pod_is_due_after_each_delay_then_given_up() -> None:
    backlog = Backlog((1.0, 2.0))
    assert backlog.hold(pod(), 0.0)
    assert backlog.next_due() == 1.0
    assert backlog.due(0.5) == []
    [(held, tries)] = backlog.due(1.0)
    assert (held["metadata"]["name"], tries) == ("test-a-t-0", 1)
    assert backlog.hold(held, 1.0, tries)
    assert backlog.next_due() == 3.0
    [(held, tries)] = backlog.due(3.0)
    assert tries == 2
    assert not backlog.hold(held, 3.0, tries)  # given up
    assert len(backlog) == 0 and backlog.next_due() is None


def test_an_event_of_a_held_pod_updates_it_and_keeps_its_time() -> None:
    backlog = Backlog((1.0, 2.0))
    backlog.hold(pod(rv="1"), 0.0)
    backlog.hold(pod(rv="2"), 0.9)
    [(held, tries)] = backlog.due(1.0)
    assert (held["metadata"]["resourceVersion"], tries) == ("2", 1)
    backlog.hold(pod(), 0.0)
    backlog.forget(("default", "test-a-t-0"))
    assert len(backlog) == 0


def test_a_conflict_is_warned_about_once_per_pod() -> None:
    backlog = Backlog()
    assert backlog.first_warning("u1")
    assert not backlog.first_warning("u1")
    assert backlog.first_warning("u2")
    backlog.forget_warning("u1")
    assert backlog.first_warning("u1")


# --- the labeller against an API server ---------------------------------------------


class World:
    """`vcflow server`'s app on a socket around `engine`, every request recorded; vcjobs
    as `find_job` sees them in `jobs` (the test sets them)."""

    def __init__(self) -> None:
        self.engine = MemoryStore()
        self.stopping = threading.Event()
        self.recorded = Recorded(create_app(self.engine, stopping=self.stopping))
        self.served = Served(self.recorded)
        self.client = KubeClient.for_url(self.served.url, timeout=10)
        self.jobs: dict[tuple[str, str], JobView] = {}
        self.lookups = 0

    def find_job(self, namespace: str, name: str) -> JobView | None:
        self.lookups += 1
        return self.jobs.get((namespace, name))

    def labeler(self, namespaces: tuple[str, ...] = ()) -> PodLabeler:
        return PodLabeler(self.client, self.find_job, namespaces)

    def create(self, data: dict[str, Any]) -> Pod:
        data = {**data, "metadata": dict(data["metadata"])}
        for key in ("uid", "resourceVersion"):
            data["metadata"].pop(key)
        return self.engine.create(Pod.from_dict(data))

    def labels(self, name: str, namespace: str = "default") -> dict[str, str]:
        return dict(self.engine.get(Pod, namespace, name).metadata.labels)

    def patches(self) -> list[str]:
        return [path for method, path, _ in self.recorded.requests if method == "PATCH"]

    def close(self) -> None:
        self.client.close()
        self.stopping.set()
        self.served.stop()


@pytest.fixture
def world() -> Iterator[World]:
    made = World()
    try:
        yield made
    finally:
        made.close()


def eventually(check: Callable[[], Any], what: str, seconds: float = 10.0) -> Any:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        found = check()
        if found:
            return found
        time.sleep(0.02)
    pytest.fail(f"never: {what}")


def test_the_labeller_labels_flows_pods_and_leaves_the_rest(
    world: World, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, "vcflow.operator.podlabels")
    world.jobs[("default", "test-a")] = JobView("job-uid", JOB_LABELS)
    world.jobs[("default", "plain")] = JobView("plain-uid", {"app": "mine"})
    uid = "job-uid"
    world.create(pod("test-a-t-0", uid=uid))  # before the labeller starts: listed
    world.create(pod("plain-t-0", "plain", "plain-uid"))
    labeler = world.labeler()
    labeler.start()
    try:
        eventually(lambda: FLOW in world.labels("test-a-t-0"), "test-a-t-0 labelled")
        # after it started: watched; a pod whose template label the user set, then one
        # more: once that is labelled, the one before it was looked at
        world.create(pod("test-a-t-1", uid=uid, labels={TEMPLATE: "default.mine"}))
        world.create(pod("test-a-t-2", uid=uid))
        eventually(lambda: FLOW in world.labels("test-a-t-2"), "test-a-t-2 labelled")
        # changed: watched again, still left alone, not warned about again
        changed = world.engine.get(Pod, "default", "test-a-t-1")
        changed.metadata.annotations["touched"] = "yes"
        world.engine.update(changed)
        world.create(pod("test-a-t-3", uid=uid))
        eventually(lambda: FLOW in world.labels("test-a-t-3"), "test-a-t-3 labelled")
    finally:
        labeler.stop()
    for name in ("test-a-t-0", "test-a-t-2", "test-a-t-3"):
        labels = world.labels(name)
        assert {k: labels[k] for k in JOB_LABELS} == JOB_LABELS
        assert labels["volcano.sh/task-spec"] == "t"  # (the others kept)
    assert world.labels("test-a-t-1") == {
        "volcano.sh/job-name": "test-a",
        "volcano.sh/task-spec": "t",
        TEMPLATE: "default.mine",
    }
    assert FLOW not in world.labels("plain-t-0")
    assert labeler.labelled == 3
    assert len(world.patches()) == 3
    warned = [r.getMessage() for r in caplog.records]
    assert warned == [
        "pod labels: pod default/test-a-t-1 left as it is: it carries "
        f"{TEMPLATE}=default.mine, not its vcjob's"
    ]


def test_the_labeller_asks_only_what_the_operators_role_grants(world: World) -> None:
    world.jobs[("default", "test-a")] = JobView("job-uid", JOB_LABELS)
    world.create(pod())
    labeler = world.labeler()
    labeler.start()
    try:
        eventually(lambda: FLOW in world.labels("test-a-t-0"), "labelled")
    finally:
        labeler.stop()
    granted = {(r.group, r.resource, v) for r in permissions.OPERATOR for v in r.verbs}
    asked = {g for g in (grant_of(*r) for r in world.recorded.requests) if g is not None}
    assert asked == {("", "pods", "list"), ("", "pods", "watch"), ("", "pods", "patch")}
    assert asked <= granted
    queries = [parse_qs(q) for method, _, q in world.recorded.requests if method == "GET"]
    assert queries and all(q["labelSelector"] == [SELECTOR] for q in queries)


def test_labelled_pods_cost_nothing_after_a_restart(world: World) -> None:
    world.jobs[("default", "test-a")] = JobView("job-uid", JOB_LABELS)
    world.create(pod(labels=JOB_LABELS))
    world.create(pod("test-a-t-1"))
    first = world.labeler()
    first.start()
    eventually(lambda: FLOW in world.labels("test-a-t-1"), "labelled")
    first.stop()
    before = len(world.recorded.requests)
    lookups = world.lookups
    again = world.labeler()  # a restart: the labelled pods are not even listed
    again.start()
    eventually(lambda: len(world.recorded.requests) >= before + 2, "list and watch")
    time.sleep(0.3)
    again.stop()
    assert world.patches() == ["/api/v1/namespaces/default/pods/test-a-t-1"]
    assert world.lookups == lookups
    assert again.labelled == 0


def test_a_vcjob_seen_late_gets_its_pods_labelled(world: World) -> None:
    world.create(pod())
    labeler = world.labeler()
    labeler.backlog = Backlog((0.05, 0.1, 0.2, 0.4, 0.8, 1.6))
    labeler.start()
    try:
        eventually(lambda: world.lookups >= 2, "looked for twice")
        world.jobs[("default", "test-a")] = JobView("job-uid", JOB_LABELS)
        eventually(lambda: FLOW in world.labels("test-a-t-0"), "labelled once found")
    finally:
        labeler.stop()


def test_only_the_namespaces_given_are_labelled(world: World) -> None:
    for namespace in ("one", "two"):
        world.jobs[(namespace, "test-a")] = JobView("job-uid", JOB_LABELS)
    world.create(pod(namespace="two"))
    world.create(pod(namespace="one"))
    labeler = world.labeler(("one",))
    labeler.start()
    try:
        eventually(lambda: FLOW in world.labels("test-a-t-0", "one"), "one's pod labelled")
        time.sleep(0.2)
    finally:
        labeler.stop()
    assert FLOW not in world.labels("test-a-t-0", "two")
    assert world.patches() == ["/api/v1/namespaces/one/pods/test-a-t-0"]


def test_a_pod_changed_since_its_event_is_not_patched_over(world: World) -> None:
    """The patch is pinned to the event's resourceVersion: a pod changed since (a user's
    label put meanwhile) is refused with 409, left as it is, and decided again on its
    event."""
    world.jobs[("default", "test-a")] = JobView("job-uid", JOB_LABELS)
    created = world.create(pod())
    seen = created.to_dict()
    now = world.engine.get(Pod, "default", "test-a-t-0")
    now.metadata.labels[TEMPLATE] = "default.mine"
    world.engine.update(now)
    labeler = world.labeler()  # not started: one look, by hand, at the stale event
    labeler._look("MODIFIED", seen, 0)
    assert len(world.patches()) == 1
    assert FLOW not in world.labels("test-a-t-0")
    assert labeler.labelled == 0 and len(labeler.backlog) == 0
    labeler._look("MODIFIED", world.engine.get(Pod, "default", "test-a-t-0").to_dict(), 0)
    assert len(world.patches()) == 1  # (a conflict now: nothing sent)


def test_nothing_is_patched_once_stopped(world: World) -> None:
    world.jobs[("default", "test-a")] = JobView("job-uid", JOB_LABELS)
    world.create(pod())
    labeler = world.labeler()
    labeler.stop()
    labeler._look("ADDED", world.engine.get(Pod, "default", "test-a-t-0").to_dict(), 0)
    assert world.patches() == []


def test_a_pod_deleted_before_its_patch_is_let_go(world: World) -> None:
    world.jobs[("default", "test-a")] = JobView("job-uid", JOB_LABELS)
    seen = world.create(pod()).to_dict()
    world.engine.delete(Pod, "default", "test-a-t-0", force=True)
    labeler = world.labeler()
    labeler._look("ADDED", seen, 0)
    assert len(world.patches()) == 1 and len(labeler.backlog) == 0
    with pytest.raises(NotFound):
        world.engine.get(Pod, "default", "test-a-t-0")


@pytest.mark.parametrize(("flags", "on"), [([], True), (["--no-label-pods"], False)])
def test_the_flag_turns_labelling_on_and_off(
    flags: list[str], on: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    given: list[process.Settings] = []

    def run(settings: process.Settings, stopping: threading.Event) -> int:
        given.append(settings)
        return 0

    monkeypatch.setattr(process, "run", run)
    result = CliRunner().invoke(app, ["operator", *flags])
    assert result.exit_code == 0, result.output
    assert [s.label_pods for s in given] == [on]


def test_a_watch_that_expired_is_listed_again(world: World) -> None:
    """A 410 (the resourceVersion compacted away): the pods are listed again and watched
    from there, as an informer does."""
    world.jobs[("default", "test-a")] = JobView("job-uid", JOB_LABELS)
    labeler = world.labeler()
    streams = labeler.watch.stream
    opened: list[str] = []

    def stream(rv: str) -> Iterator[tuple[str, dict[str, Any]]]:
        opened.append(rv)
        if len(opened) == 1:
            raise Expired("Error from server (Expired): too old resource version")
        return streams(rv)

    labeler.watch.stream = stream  # type: ignore[method-assign]
    labeler.start()
    try:
        eventually(lambda: len(opened) >= 2, "the watch opened again")
        world.create(pod())
        eventually(lambda: FLOW in world.labels("test-a-t-0"), "labelled after the relist")
    finally:
        labeler.stop()
    lists = [q for m, _, q in world.recorded.requests if m == "GET" and "watch=true" not in q]
    assert len(lists) == 2


def test_podgroup_notes_end_quietly_where_no_podgroups_are_served(
    world: World, caplog: pytest.LogCaptureFixture
) -> None:
    """`vcflow server` serves no PodGroups: the notes' watch (the same list-then-watch as
    the labeller's) ends at once with one info line, instead of retrying for ever."""
    notes = PodGroupNotes(world.client)
    with caplog.at_level(logging.INFO, logger="vcflow.operator.podgroups"):
        notes.start()
        notes._thread.join(10)
    assert not notes._thread.is_alive()
    assert "serves no PodGroups" in caplog.text
    assert "again in" not in caplog.text
