"""The webhook as kube-apiserver calls it: the recorded AdmissionReview v1 payloads of
tests/data/admission POSTed over HTTPS (verified with the test CA) to a real `vcflow
webhook` process reading a real cluster (`vcflow server --runtime none --controllers off`).
Refusals carry vcflow's own messages, the same as the vcflow server gives for the same
write; allowed writes carry admission's warnings."""

from __future__ import annotations

from typing import Any

import pytest
from tests.server.conftest import FLOW, Server, jobflow, template

from .conftest import Webhook, payload, put

JF, JT = "/validate-jobflow", "/validate-jobtemplate"
CYCLE = "spec.flows[0].dependsOn.targets: jobflow Flow is not DAG: cycle a → b → a"


@pytest.fixture(scope="module")
def seeded(cluster: Server) -> Server:
    """Templates a and b; flow `test` (a → b) Running; flow `done` on template x, Succeed."""
    for name in ("a", "b", "x"):
        put(cluster, template(name, "true"))
    put(cluster, jobflow("test", "a", "b<a"), phase="Running")
    put(cluster, jobflow("done", "x"), phase="Succeed")
    return cluster


def response(answer: dict[str, Any], sent: dict[str, Any]) -> dict[str, Any]:
    """The answer's `response`, after checking it echoes the review's identity."""
    assert answer["apiVersion"] == "admission.k8s.io/v1"
    assert answer["kind"] == "AdmissionReview"
    found: dict[str, Any] = answer["response"]
    assert found["uid"] == sent["request"]["uid"]
    return found


def refused(found: dict[str, Any], code: int, message: str) -> None:
    assert found["allowed"] is False
    reason = {422: "Invalid", 403: "Forbidden"}[code]
    assert found["status"] == {
        "status": "Failure",
        "code": code,
        "reason": reason,
        "message": message,
    }


def test_a_cyclic_flow_is_refused_with_the_servers_message(
    webhook: Webhook, seeded: Server
) -> None:
    sent = payload("jobflow-create-cyclic")
    found = response(webhook.review(JF, sent), sent)
    refused(found, 422, CYCLE)
    # the vcflow server refuses the same object with the same words
    obj = sent["request"]["object"]
    bare = {k: obj[k] for k in ("apiVersion", "kind", "spec")} | {"metadata": {"name": "loop"}}
    with seeded.client() as client:
        answered = client.post(f"{FLOW}/jobflows", params={"dryRun": "All"}, json=bare)
    assert answered.status_code == 422
    assert answered.json()["message"] == f'JobFlow.flow.volcano.sh "loop" is invalid: {CYCLE}'


def test_a_refusal_keeps_the_warnings_as_the_server_does(webhook: Webhook, seeded: Server) -> None:
    """A cyclic flow whose templates are missing: the refusal and the two TemplateNotFound
    warnings, on the webhook (`warnings`, allowed or not) and on the vcflow server
    (`Warning` headers beside the 422 Status, as kube-apiserver sends them)."""
    sent = payload("jobflow-create-cyclic")
    obj = sent["request"]["object"]
    obj["spec"]["flows"] = [
        {"name": "p", "dependsOn": {"targets": ["q"]}},
        {"name": "q", "dependsOn": {"targets": ["p"]}},
    ]
    cycle = "spec.flows[0].dependsOn.targets: jobflow Flow is not DAG: cycle p → q → p"
    missing = [
        f'spec.flows[{i}].name: JobTemplate "{t}" not found; the entry will wait '
        "(TemplateNotFound) until it is created"
        for i, t in enumerate("pq")
    ]
    found = response(webhook.review(JF, sent), sent)
    refused(found, 422, cycle)
    assert found["warnings"] == missing
    bare = {k: obj[k] for k in ("apiVersion", "kind", "spec")} | {"metadata": {"name": "loop"}}
    with seeded.client() as client:
        answered = client.post(f"{FLOW}/jobflows", params={"dryRun": "All"}, json=bare)
    assert answered.status_code == 422
    assert answered.json()["message"] == f'JobFlow.flow.volcano.sh "loop" is invalid: {cycle}'
    assert answered.headers.get_list("Warning") == [
        '299 - "' + w.replace('"', '\\"') + '"' for w in missing
    ]


def test_a_dry_run_is_answered_the_same(webhook: Webhook, seeded: Server) -> None:
    sent = payload("jobflow-create-cyclic")
    sent["request"]["dryRun"] = True
    refused(response(webhook.review(JF, sent), sent), 422, CYCLE)


def test_a_flow_is_allowed_with_warnings_from_the_clusters_templates(
    webhook: Webhook, seeded: Server
) -> None:
    sent = payload("jobflow-create")  # entries a, b (in the cluster) and c (not)
    found = response(webhook.review(JF, sent), sent)
    assert found["allowed"] is True
    assert "status" not in found
    assert found["warnings"] == [
        'spec.flows[2].name: JobTemplate "c" not found; the entry will wait (TemplateNotFound) '
        "until it is created"
    ]


def test_a_flow_spec_update_is_refused(webhook: Webhook, seeded: Server) -> None:
    sent = payload("jobflow-update")  # entry c added to a Running flow
    found = response(webhook.review(JF, sent), sent)
    refused(
        found,
        422,
        "spec: jobflow spec updates are not supported (a flow runs its spec once: delete the "
        "flow first, or run it again as a new flow with vcflow resubmit jobflow test "
        "[-p NAME=VALUE])",
    )


def test_a_flow_metadata_update_is_allowed(webhook: Webhook, seeded: Server) -> None:
    sent = payload("jobflow-update")
    request = sent["request"]
    request["object"]["spec"] = request["oldObject"]["spec"]
    request["object"]["metadata"]["labels"] = {"team": "ml"}
    found = response(webhook.review(JF, sent), sent)
    assert found["allowed"] is True


def test_an_unfinished_flow_is_not_deleted(webhook: Webhook, seeded: Server) -> None:
    sent = payload("jobflow-delete")  # oldObject Running; object null
    assert sent["request"]["object"] is None
    refused(
        response(webhook.review(JF, sent), sent),
        403,
        'cannot delete JobFlow "test" while it is Running: stop it first (vcflow stop jobflow '
        "test -n default), which terminates its jobs, then delete it",
    )
    sent["request"]["oldObject"]["status"]["state"]["phase"] = "Succeed"
    assert response(webhook.review(JF, sent), sent)["allowed"] is True


def test_a_template_an_unfinished_flow_uses_is_not_deleted(
    webhook: Webhook, seeded: Server
) -> None:
    sent = payload("jobtemplate-delete")  # template a; flow test (Running) uses it
    message = (
        'cannot delete JobTemplate "a": unfinished JobFlow(s) test use it; stop or delete '
        "them first"
    )
    refused(response(webhook.review(JT, sent), sent), 403, message)
    with seeded.client() as client:  # the vcflow server's words for the same delete
        answered = client.delete(f"{FLOW}/jobtemplates/a", params={"dryRun": "All"})
    assert answered.status_code == 403
    assert answered.json()["message"] == f'jobtemplates.flow.volcano.sh "a" is forbidden: {message}'


def test_a_template_only_finished_flows_use_is_deleted(webhook: Webhook, seeded: Server) -> None:
    sent = payload("jobtemplate-delete")
    sent["request"]["name"] = sent["request"]["oldObject"]["metadata"]["name"] = "x"
    assert response(webhook.review(JT, sent), sent)["allowed"] is True


def test_the_namespace_controller_deletes_what_it_must(webhook: Webhook, seeded: Server) -> None:
    for kind, path in (("jobtemplate-delete", JT), ("jobflow-delete", JF)):
        sent = payload(kind)
        sent["request"]["userInfo"] = {
            "username": "system:serviceaccount:kube-system:namespace-controller",
            "groups": ["system:serviceaccounts", "system:authenticated"],
        }
        assert response(webhook.review(path, sent), sent)["allowed"] is True


def test_a_template_is_allowed_with_warnings(webhook: Webhook, seeded: Server) -> None:
    sent = payload("jobtemplate-create")  # no restartPolicy
    found = response(webhook.review(JT, sent), sent)
    assert found["allowed"] is True
    [warning] = found["warnings"]
    assert warning.startswith(
        'spec.tasks[0].template.spec.restartPolicy: task "default-nginx" has no restartPolicy: '
        "Kubernetes defaults it to Always"
    )


def test_a_template_update_is_reviewed_as_the_store_does(webhook: Webhook, seeded: Server) -> None:
    sent = payload("jobtemplate-update")  # cpu 1 → 2: allowed
    assert response(webhook.review(JT, sent), sent)["allowed"] is True
    task = sent["request"]["object"]["spec"]["tasks"][0]
    task["replicas"] = 1_000_000
    found = response(webhook.review(JT, sent), sent)
    assert found["allowed"] is False
    assert found["status"]["code"] == 422
    assert found["status"]["message"].startswith("spec.tasks[0].replicas: ")


def test_unknown_fields_follow_field_validation(webhook: Webhook, seeded: Server) -> None:
    sent = payload("jobtemplate-create")
    spec = sent["request"]["object"]["spec"]
    spec["tasks"][0]["template"]["spec"]["restartPolicy"] = "Never"
    spec["tasks"][0]["replica"] = 2
    strict = response(webhook.review(JT, sent), sent)  # kubectl's default: Strict
    assert strict["allowed"] is False
    assert (
        strict["status"]["message"]
        == 'spec.tasks[0].replica: unknown field "spec.tasks[0].replica"'
    )
    sent["request"]["options"]["fieldValidation"] = "Warn"
    warned = response(webhook.review(JT, sent), sent)
    assert warned["allowed"] is True
    assert warned["warnings"] == ['unknown field "spec.tasks[0].replica"']
