"""Every controller conformance case on the real control plane (the session's `cluster`:
kube-apiserver v1.37.2 on etcd 3.7.3, kube-controller-manager, Volcano v1.10's controllers),
one at a time in its `default` namespace, with vcflow installed as a cluster runs it
(tests/store/clusterbackend.py: the CRDs of deploy/crds, `vcflow webhook` registered by
deploy/webhook's configuration): the controllers (`Manager`) and the case's actions over a
`KubeStore` on the real API server. `default` is emptied before each case.

What the case's harness memory store does in the other backends is done here as follows:
- Volcano's job controller, which acts on every vcjob, is fenced off `default` by a
  ValidatingAdmissionPolicy refusing its writes there (clusterbackend.fence_volcano): a
  vcjob's phase moves only by the case's `set_phase` (a status patch), as in the harness.
- `fail_creates`: a ValidatingAdmissionPolicy refusing the create of that vcjob by name,
  with the case's message (a real refusal by the server: 422 Invalid); its count is kept by
  the case's store, which sees each refusal and removes the policy after the last one.
- `submitted_spec`: the spec of each vcjob create the server took, recorded by the case's
  store (`CaseStore.create`) as the harness store records it.
- The garbage collector deletes a deleted flow's vcjobs after the delete returns: the
  controllers settle again once it has (`CaseStore.converge`, `world.Converging`).
- The controllers run on the case's virtual clock; the server stamps objects with its own.
  A case whose expectations depend on both meeting cannot run here: CANNOT_RUN says which,
  and why (each skipped with that reason)."""

from __future__ import annotations

import contextlib
import secrets
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.conformance.test_conformance_kube import CASE_FILES
from tests.store.clusterbackend import ADMISSION, Admin, VcflowOnCluster, started, wait_for
from tests.store.conftest import flow, template, vcjob

from vcflow.api.errors import StoreError, ValidationFailed
from vcflow.api.jobflow import JobFlow
from vcflow.api.jobtemplate import JobTemplate
from vcflow.api.vcjob import VCJob
from vcflow.conformance import HarnessStore, Passed, Skipped, run_file
from vcflow.conformance.world import World
from vcflow.kubeapi import resources
from vcflow.kubestore import KubeStore

NAMESPACE = "default"
#: seconds the garbage collector gets to delete a deleted flow's vcjobs
GC_DEADLINE = 60.0

#: the server's clock against the case's
_CLOCKS = (
    "the real API server stamps creationTimestamp with its own clock, in whole seconds (the "
    "wall clock), while the controllers and the case's `wait` steps run on the "
    "case's virtual clock (from 2026-01-01T00:00:00Z): a deadline counted from a server "
    "stamp lies months past every virtual time of the case, and a clock set to the "
    "server's at the start would not hold either: a vcjob created after a virtual `wait` "
    "gets a stamp from before it, and the second the server rounds to decides whether "
    "`wait: 59` is before or after a 60 s deadline"
)
#: case id → why it cannot run on a real API server (skipped with this reason)
CANNOT_RUN: dict[str, str] = {
    "vf-ctl-27-entry-deadline-terminates-and-retries": (
        "an entry's activeDeadlineSeconds counts from its vcjob's creationTimestamp; "
        + _CLOCKS
        + "; and the case expects a virtual time in an annotation "
        "(vcflow.io/deadline-exceeded: 2026-01-01T00:00:30Z)"
    ),
    "vf-ctl-28-flow-deadline-stops-the-flow": (
        "the flow's activeDeadlineSeconds counts from its creationTimestamp; " + _CLOCKS
    ),
    "vf-ctl-63-scheduling-annotations": (
        "the case expects the flow's creationTimestamp in an annotation "
        "(vcflow.io/flow-created: 2026-01-01T00:00:00Z, the virtual clock's); " + _CLOCKS
    ),
    "vf-ctl-47-exit-handler-after-deadline": (
        "the flow's activeDeadlineSeconds counts from its creationTimestamp; " + _CLOCKS
    ),
}


class FaultPolicies(dict[str, tuple[str, int | None]]):
    """The harness's `faults` (vcjob name → message, creates left to refuse; None: all) as
    ValidatingAdmissionPolicies: setting one makes the server refuse the creates of that
    vcjob in the namespace with the message; `refused` counts one refusal, and the policy
    goes after the last. `remove_all` at the case's end."""

    def __init__(self, admin: Admin, namespace: str) -> None:
        super().__init__()
        self.admin, self.namespace = admin, namespace
        self.suffix = secrets.token_hex(3)
        self.installed: set[str] = set()

    def _name(self, job: str) -> str:
        return f"vcflow-test-fault-{self.suffix}-{job}"

    def __setitem__(self, job: str, fault: tuple[str, int | None]) -> None:
        message, count = fault
        super().__setitem__(job, fault)
        if count is not None and count <= 0:
            self._remove(job)
            return
        name = self._name(job)
        policy = {
            "apiVersion": "admissionregistration.k8s.io/v1",
            "kind": "ValidatingAdmissionPolicy",
            "metadata": {"name": name},
            "spec": {
                "failurePolicy": "Fail",
                "matchConstraints": {
                    "namespaceSelector": {
                        "matchLabels": {"kubernetes.io/metadata.name": self.namespace}
                    },
                    "resourceRules": [
                        {
                            "apiGroups": [resources.VCJOBS.group],
                            "apiVersions": [resources.VCJOBS.version],
                            "operations": ["CREATE"],
                            "resources": [resources.VCJOBS.plural],
                        }
                    ],
                },
                "validations": [
                    {"expression": f"object.metadata.name != {job!r}", "message": message}
                ],
            },
        }
        binding = {
            "apiVersion": "admissionregistration.k8s.io/v1",
            "kind": "ValidatingAdmissionPolicyBinding",
            "metadata": {"name": name},
            "spec": {"policyName": name, "validationActions": ["Deny"]},
        }
        if job not in self.installed:
            self.admin.ok("POST", f"{ADMISSION}/validatingadmissionpolicies", policy)
            self.admin.ok("POST", f"{ADMISSION}/validatingadmissionpolicybindings", binding)
            self.installed.add(job)
        wait_for(lambda: self._probe(job) == 422, f"the server refusing vcjob {job}")

    def _probe(self, job: str) -> int:
        """The status of a dry-run create of vcjob `job` (422: the policy refuses it)."""
        body = {
            "apiVersion": resources.VCJOBS.api_version,
            "kind": "Job",
            "metadata": {"name": job},
            "spec": {"minAvailable": 1, "tasks": [{"name": "t", "replicas": 1, "template": {}}]},
        }
        path = resources.VCJOBS.path(self.namespace)
        return self.admin.send("POST", path, body, params={"dryRun": "All"}).status_code

    def refused(self, job: str, error: ValidationFailed) -> None:
        """The server refused a create of `job`: by its policy, count it."""
        message, count = self[job]
        if job not in self.installed or message not in str(error):
            return
        if count is None:
            return
        super().__setitem__(job, (message, count - 1))
        if count - 1 <= 0:
            self._remove(job)

    def _remove(self, job: str) -> None:
        if job not in self.installed:
            return
        name = self._name(job)
        self.admin.send("DELETE", f"{ADMISSION}/validatingadmissionpolicybindings/{name}")
        self.admin.send("DELETE", f"{ADMISSION}/validatingadmissionpolicies/{name}")
        self.installed.discard(job)
        wait_for(lambda: self._probe(job) != 422, f"the server taking vcjob {job} again")

    def remove_all(self) -> None:
        for job in list(self.installed):
            with contextlib.suppress(Exception):
                self._remove(job)


class CaseStore(KubeStore):
    """The case's store on the cluster: a KubeStore that records each vcjob create the
    server took (`harness.submitted`, as the harness store does), counts the server's
    refusals of the faulted vcjobs (`FaultPolicies`), and waits for the garbage collector
    (`converge`)."""

    harness: HarnessStore
    faults: FaultPolicies

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.created: dict[str, str] = {}  # uid → name of each vcjob created, until gone

    def create(self, obj: Any, *, admit: bool = True) -> Any:
        try:
            created = super().create(obj, admit=admit)
        except ValidationFailed as exc:
            if isinstance(obj, VCJob) and obj.name in self.faults:
                self.faults.refused(obj.name, exc)
            raise
        if isinstance(obj, VCJob):
            self.harness.submitted[obj.name] = obj.spec.to_dict() if obj.spec else None
            self.harness.created.append(obj.name)  # (`vcjob_order`)
            self.created[created.metadata.uid] = created.name
        return created

    def converge(self) -> bool:
        """Wait until the garbage collector has deleted every vcjob of the namespace whose
        owners are all gone; the next reads then wait for the DELETED event of each vcjob
        gone since the last call (the collector's deletes come on the watch at their own
        pace). True if any is gone: the controllers have events to read."""
        end = time.monotonic() + GC_DEADLINE
        while True:
            jobs = self.list(VCJob, NAMESPACE)
            live = {o.metadata.uid for o in [*jobs, *self.list(JobFlow, NAMESPACE)]}
            orphans = [
                job.name
                for job in jobs
                if job.metadata.owner_references
                and not job.metadata.deletion_timestamp
                and all(ref.uid not in live for ref in job.metadata.owner_references)
            ]
            if not orphans:
                break
            if time.monotonic() > end:
                raise StoreError(f"the garbage collector left the vcjobs {orphans}")
            time.sleep(0.05)
        gone = {uid: name for uid, name in self.created.items() if uid not in live}
        for uid, name in gone.items():
            self.informer.deleted(VCJob, (NAMESPACE, name), uid, 0)  # (unless it came)
            del self.created[uid]
        return bool(gone)


class OnCluster:
    """A `world.Serve`: the case's store on the cluster, its faults as policies."""

    def __init__(self, on_cluster: VcflowOnCluster) -> None:
        self.on_cluster = on_cluster

    @contextlib.contextmanager
    def __call__(self, harness: HarnessStore) -> Iterator[KubeStore]:
        faults = FaultPolicies(self.on_cluster.admin, NAMESPACE)
        store = CaseStore(self.on_cluster.client())
        store.harness, store.faults = harness, faults
        harness.faults = faults  # (the case's `fail_creates` sets them)
        try:
            yield store
        finally:
            store.close()
            faults.remove_all()


@pytest.fixture(scope="module")
def on_cluster(
    cluster: Any, vcflow_crds: list[str], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[VcflowOnCluster]:
    """vcflow installed in the session's cluster for `default`, for the module's cases."""
    with started(cluster, (NAMESPACE,), tmp_path_factory.mktemp("conformance-on-cluster")) as found:
        yield found
        _delete_queues(found)  # (cluster-scoped: the session's other modules would meet them)


#: the Queues a case leaves alone: Volcano's own
VOLCANO_QUEUES = ("default", "root")


def _delete_queues(on_cluster: VcflowOnCluster) -> None:
    """Queues are cluster-scoped, so emptying `default` leaves an earlier case's: gone,
    and waited for, before the next case (two cases make `team-a`)."""
    admin, path = on_cluster.admin, resources.QUEUES.path(None)
    mine = [
        item["metadata"]["name"]
        for item in admin.ok("GET", path)["items"]
        if item["metadata"]["name"] not in VOLCANO_QUEUES
    ]
    for name in mine:
        admin.send("DELETE", resources.QUEUES.path(None, name))

    def gone() -> bool:
        names = {i["metadata"]["name"] for i in admin.ok("GET", path)["items"]}
        return not names & set(mine)

    wait_for(gone, "the cases' Queues deleted", GC_DEADLINE)


def _case_id(path: Path) -> str:
    return path.stem


@pytest.mark.parametrize("path", CASE_FILES, ids=[_case_id(p) for p in CASE_FILES])
def test_controller_case_on_cluster(path: Path, on_cluster: VcflowOnCluster) -> None:
    if path.stem in CANNOT_RUN:
        pytest.skip(CANNOT_RUN[path.stem])
    on_cluster.clean()
    _delete_queues(on_cluster)
    result = run_file(str(path), serve=OnCluster(on_cluster)).result
    if isinstance(result, Skipped):
        pytest.skip(result.reason)
    assert isinstance(result, Passed), result.reason


def test_a_fault_is_the_servers_refusal(on_cluster: VcflowOnCluster) -> None:
    """`fail_creates` on the cluster: a ValidatingAdmissionPolicy refuses the vcjob's
    creates (the server's 422, the case's message in it) as many times as the case says,
    then the server takes it; the spec the server took is recorded."""
    on_cluster.clean()
    with World(NAMESPACE, OnCluster(on_cluster)) as world:
        world.harness.faults["x"] = ("queue closed", 2)
        for _ in range(2):
            with pytest.raises(ValidationFailed) as refused:
                world.store.create(vcjob("x"))
            said = str(refused.value)
            assert "queue closed" in said and "ValidatingAdmissionPolicy" in said
        assert "x" not in world.harness.submitted
        created = world.store.create(vcjob("x"))
        assert created.spec is not None
        assert world.harness.submitted["x"] == vcjob("x").spec.to_dict()  # type: ignore[union-attr]
        assert world.harness.faults["x"] == ("queue closed", 0)


def test_the_garbage_collector_takes_a_deleted_flows_vcjobs(on_cluster: VcflowOnCluster) -> None:
    """The controllers settle again once kube-controller-manager's garbage collector has
    deleted the vcjobs of a flow deleted (with --force: vcflow's webhook lets an unfinished
    flow go then)."""
    on_cluster.clean()
    with World(NAMESPACE, OnCluster(on_cluster)) as world:
        world.store.create(template("a"))
        world.store.create(flow("f", "a"))
        world.settle()
        assert [j.name for j in world.store.list(VCJob, NAMESPACE)] == ["f-a"]
        with pytest.raises(ValidationFailed, match='cannot delete JobFlow "f" while it is'):
            world.store.delete(JobFlow, NAMESPACE, "f")
        world.store.delete(JobFlow, NAMESPACE, "f", force=True)
        world.settle()
        assert world.store.list(VCJob, NAMESPACE) == []
        template_status = world.store.get(JobTemplate, NAMESPACE, "a").status
        assert template_status is None or not template_status.job_depends_on_list
