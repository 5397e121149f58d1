"""`webhook.verdict` in-process, on a memory store as the cluster: what the webhook leaves
to others (status writes, the namespace controller's and garbage collector's deletes),
what only the local runtime cares about (left out), schema errors, fieldValidation Ignore,
and reviews it cannot answer."""

from __future__ import annotations

import json
from typing import Any

import pytest

from vcflow.admission import review as admission
from vcflow.api import loading
from vcflow.api.errors import Origin
from vcflow.api.jobtemplate import JobTemplate
from vcflow.store.memory import MemoryStore
from vcflow.webhook import admissionreview, verdict
from vcflow.webhook.admissionreview import Malformed, Verdict

from .conftest import payload


def decide(body: dict[str, Any]) -> Verdict:
    parsed = admissionreview.parse(json.dumps(body).encode())
    return verdict.decide(parsed, MemoryStore(), parsed.kind)


def test_a_status_write_is_not_reviewed() -> None:
    sent = payload("jobflow-create-cyclic")
    sent["request"]["operation"] = "UPDATE"
    sent["request"]["oldObject"] = sent["request"]["object"]
    sent["request"]["subResource"] = "status"
    assert decide(sent) == Verdict(True)


def test_the_garbage_collector_deletes_what_it_must() -> None:
    sent = payload("jobflow-delete")
    assert decide(sent).allowed is False
    sent["request"]["userInfo"] = {
        "username": "system:serviceaccount:kube-system:generic-garbage-collector"
    }
    assert decide(sent) == Verdict(True)


def test_a_forced_delete_is_not_reviewed() -> None:
    """`gracePeriodSeconds: 0` (vcflow delete --force), as kube-apiserver puts it in the
    review's options (seen on v1.37), skips the unfinished-flow check, as on vcflow server."""
    sent = payload("jobflow-delete")
    sent["request"]["options"] = {"kind": "DeleteOptions", "apiVersion": "meta.k8s.io/v1"}
    assert decide(sent).allowed is False
    sent["request"]["options"].update(gracePeriodSeconds=0, propagationPolicy="Background")
    assert decide(sent) == Verdict(True)
    sent["request"]["options"]["gracePeriodSeconds"] = 30
    assert decide(sent).allowed is False


def test_what_only_the_local_runtime_lacks_is_not_said() -> None:
    sent = payload("jobtemplate-create")
    pod = sent["request"]["object"]["spec"]["tasks"][0]["template"]["spec"]
    pod["restartPolicy"] = "Never"
    pod["volumes"] = [{"name": "data", "persistentVolumeClaim": {"claimName": "data"}}]
    model, _ = loading.to_model(loading.Document(sent["request"]["object"], Origin()))
    assert model is not None
    embedded = admission.warnings_only(admission.review(model))
    assert [w.path for w in embedded] == [
        "spec.tasks[0].template.spec.volumes[0].persistentVolumeClaim"
    ]
    assert decide(sent) == Verdict(True)


def test_a_schema_error_is_refused_naming_the_field() -> None:
    sent = payload("jobtemplate-create")
    sent["request"]["object"]["spec"]["tasks"][0]["replicas"] = "two"
    found = decide(sent)
    assert (found.allowed, found.code, found.reason) == (False, 422, "Invalid")
    assert found.message.startswith("spec.tasks[0].replicas: ")


def test_field_validation_ignore_says_nothing_of_unknown_fields() -> None:
    sent = payload("jobtemplate-create")
    spec = sent["request"]["object"]["spec"]
    spec["tasks"][0]["template"]["spec"]["restartPolicy"] = "Never"
    spec["tasks"][0]["replica"] = 2
    sent["request"]["options"]["fieldValidation"] = "Ignore"
    assert decide(sent) == Verdict(True)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"oldObject": None}, "a DELETE review without oldObject (kube-apiserver 1.15+ sends it)"),
        (
            {"operation": "CONNECT"},
            "request.operation 'CONNECT': this webhook reviews CREATE, UPDATE and DELETE",
        ),
        ({"userInfo": []}, "request.userInfo must be an object or null"),
    ],
    ids=["delete-without-old-object", "connect", "user-info-not-an-object"],
)
def test_a_review_it_cannot_answer_is_malformed(change: dict[str, Any], message: str) -> None:
    sent = payload("jobflow-delete")
    sent["request"].update(change)
    with pytest.raises(Malformed) as raised:
        decide(sent)
    assert str(raised.value) == message


class _Counting(MemoryStore):
    """A cluster counting the JobTemplates its reads hand back."""

    read = 0

    def list(self, kind: Any, *args: Any, **kwargs: Any) -> Any:
        found = super().list(kind, *args, **kwargs)
        self.read += len(found) if kind is JobTemplate else 0
        return found

    def get(self, kind: Any, *args: Any, **kwargs: Any) -> Any:
        found = super().get(kind, *args, **kwargs)
        self.read += kind is JobTemplate
        return found


def test_a_flow_review_reads_the_templates_it_names_not_the_namespaces() -> None:
    cluster = _Counting()
    made = payload("jobtemplate-create")["request"]["object"]
    for i in range(50):
        made["metadata"] = {"name": f"t{i:02d}", "namespace": "default"}
        cluster.create(JobTemplate.from_dict(made))
    sent = payload("jobflow-create")
    sent["request"]["object"]["spec"]["flows"] = [
        {"name": "t07"},
        {"name": "t42", "dependsOn": {"targets": ["t07"]}},
    ]
    parsed = admissionreview.parse(json.dumps(sent).encode())
    assert verdict.decide(parsed, cluster, "JobFlow") == Verdict(True)
    assert cluster.read == 2
