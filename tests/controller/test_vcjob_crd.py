"""Every vcjob the controllers create is one Volcano's API server stores: Volcano's example
flow and each vcflow example are run through the embedded controllers (a MemoryStore and
a Manager, the test playing Volcano's job controller), and each vcjob's create body —
as the Kubernetes store POSTs it (`wire.incoming`, server-owned metadata dropped) —
validates under the openAPIV3Schema of Volcano's Job CRD (src/vcflow/admission/crds/,
unknown fields refused as under `fieldValidation=Strict`), its metadata under
Kubernetes 1.26's ObjectMeta (kubernetes-validate's schema).
"""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any

import jsonschema
import kubernetes_validate
import pytest
import yaml
from tests.kubeapi.test_crds import as_json_schema

from vcflow.api import loading
from vcflow.api import names as apinames
from vcflow.api.clock import FakeClock
from vcflow.api.jobflow import JobFlow
from vcflow.api.meta import Resource
from vcflow.api.vcjob import JobState, VCJob, VCJobStatus
from vcflow.controller.manager import Manager
from vcflow.store import MemoryStore, wire

REPO = Path(__file__).resolve().parents[2]
JOB_CRD = REPO / "src" / "vcflow" / "admission" / "crds" / "batch.volcano.sh_jobs.yaml"
SUFFIXES = (".yaml", ".yml", ".json")
EXAMPLES = {
    "volcano": REPO / "tests" / "data" / "volcano" / "example" / "jobflow",
    **{
        str(folder.relative_to(REPO / "examples")): folder
        for folder in sorted({p.parent for p in (REPO / "examples").rglob("*.yaml")})
    },
}
ATTEMPT = "vcflow.io/attempt"
OBJECT_META = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"


class Recording(MemoryStore):
    """A MemoryStore keeping the body the Kubernetes store would POST for each vcjob
    created (kubestore.KubeStore._create)."""

    def __init__(self, clock: FakeClock) -> None:
        super().__init__(clock=clock)
        self.posted: list[dict[str, Any]] = []

    def create(self, obj: Any, *, admit: bool = True) -> Any:
        if isinstance(obj, VCJob):
            body = wire.incoming(obj)
            body.setdefault("metadata", {})["namespace"] = (
                obj.namespace or apinames.DEFAULT_NAMESPACE
            )
            for key in wire.SERVER_FIELDS:
                body["metadata"].pop(key, None)
            self.posted.append(json.loads(json.dumps(body)))  # a copy, as JSON sends it
        return super().create(obj, admit=admit)


@functools.cache
def job_schema() -> jsonschema.Draft4Validator:
    crd = yaml.safe_load(JOB_CRD.read_text())
    (version,) = [v for v in crd["spec"]["versions"] if v["name"] == "v1alpha1"]
    schema = as_json_schema(version["schema"]["openAPIV3Schema"])
    schema["properties"]["metadata"] = {"type": "object"}  # the API server's, checked below
    jsonschema.Draft4Validator.check_schema(schema)
    return jsonschema.Draft4Validator(schema)


@functools.cache
def meta_schema() -> jsonschema.Draft202012Validator:
    found = kubernetes_validate.utils.schema_contents(
        "kubernetes-json-schema/v1.26.0-local-strict/_definitions.json", "1.26"
    )
    schema = {"$defs": found["$defs"], "$ref": f"#/$defs/{OBJECT_META}"}
    return jsonschema.Draft202012Validator(schema)


def crd_errors(body: dict[str, Any]) -> list[str]:
    name = body.get("metadata", {}).get("name")
    found = [*job_schema().iter_errors(body)]
    found += [*meta_schema().iter_errors(body.get("metadata", {}))]
    return [f"{name}: {'.'.join(map(str, e.absolute_path))}: {e.message}" for e in found]


RETRY_ONCE = {"maxRetries": 1, "backoff": {"type": "Constant", "baseDelay": "1s"}}


def objects(folder: Path, *, retried: bool) -> list[Resource]:
    """The folder's manifests; with `retried`, each flow without a retryPolicy gets one
    retry (so that every vcjob whose first attempt fails is created a second time)."""
    paths = sorted(str(p) for p in folder.iterdir() if p.suffix in SUFFIXES)
    found = []
    for doc in loading.read_documents(paths):
        if retried and doc.data.get("kind") == "JobFlow":
            doc.data["spec"].setdefault("retryPolicy", RETRY_ONCE)
        obj, errors = loading.to_model(doc)
        assert obj is not None and not errors, errors
        found.append(obj)
    return found


def run(folder: Path, *, first_attempt: str) -> Recording:
    """The folder's flows to their end: each vcjob's first attempt ends `first_attempt`
    (Failed: and is retried once), every later one Completed; the clock jumps past each
    backoff and deadline."""
    clock = FakeClock()
    store = Recording(clock)
    store.apply(objects(folder, retried=first_attempt == "Failed"))
    manager = Manager(store, clock)
    ended: set[str] = set()
    for _ in range(200):
        manager.settle()
        fresh = [j for j in store.list(VCJob) if j.metadata.uid not in ended]
        if not fresh:
            due = manager.next_due()
            if due is None:
                break
            clock.advance(max(due - clock.monotonic(), 0.0) + 1)
            continue
        for job in fresh:
            ended.add(job.metadata.uid)
            first = job.metadata.annotations.get(ATTEMPT, "1") == "1"
            phase = first_attempt if first else "Completed"
            job.status = VCJobStatus(state=JobState(phase=phase))
            store.update_status(job)
    else:
        pytest.fail(f"{folder} did not settle")
    for flow in store.list(JobFlow):
        assert flow.status is not None and flow.status.state.phase in ("Succeed", "Failed")
    return store


@pytest.mark.parametrize("first_attempt", ["Completed", "Failed"])
@pytest.mark.parametrize("example", sorted(EXAMPLES))
def test_every_vcjob_created_is_valid_under_volcanos_job_crd(
    example: str, first_attempt: str
) -> None:
    store = run(EXAMPLES[example], first_attempt=first_attempt)
    assert store.posted, f"{example}: no vcjob created"
    if first_attempt == "Failed":  # each created twice: the second attempt's body too
        attempts = [b["metadata"].get("annotations", {}).get(ATTEMPT) for b in store.posted]
        assert attempts.count("2") == attempts.count(None) > 0, attempts
    errors = [error for body in store.posted for error in crd_errors(body)]
    assert errors == []


def test_the_volcano_example_creates_every_job_once_in_order() -> None:
    """The runs above cover what they claim: Volcano's example creates its five vcjobs,
    each once, with the identity and ownership Volcano's own controller gives them."""
    store = run(EXAMPLES["volcano"], first_attempt="Completed")
    assert [b["metadata"]["name"] for b in store.posted] == [
        "test-a",
        "test-b",
        "test-c",
        "test-d",
        "test-e",
    ]
    body = store.posted[0]
    assert (body["apiVersion"], body["kind"]) == ("batch.volcano.sh/v1alpha1", "Job")
    (owner,) = body["metadata"]["ownerReferences"]
    assert owner["kind"] == "JobFlow" and owner["controller"] is True
    assert not set(wire.SERVER_FIELDS) & set(body["metadata"])


def test_the_check_refuses_what_volcanos_api_server_refuses() -> None:
    """The control: a misspelt field, a wrong type and bad metadata are each reported."""
    store = run(EXAMPLES["volcano"], first_attempt="Completed")
    body = json.loads(json.dumps(store.posted[0]))
    body["spec"]["tasks"][0]["replica"] = 1
    body["spec"]["minAvailable"] = "one"
    body["metadata"]["labels"] = {"k": 5}
    errors = crd_errors(body)
    assert len(errors) == 3, errors
    assert any("'replica' was unexpected" in e for e in errors)
    assert any("'one' is not of type 'integer'" in e for e in errors)
    assert any("labels.k: 5 is not of type" in e for e in errors)
