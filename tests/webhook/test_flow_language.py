"""The webhook on the flow language (docs/flow-features.md part II), as kube-apiserver calls
it: a flow whose required argument has no value is refused (with kubectl the manifest
carries the values), one with its values is allowed; a template that a running flow uses
under another entry name is not deleted; an unknown field of a flow entry names the vcflow
field that does its job, as a warning or, under fieldValidation Strict, a refusal."""

from __future__ import annotations

from typing import Any

import pytest
from tests.server.conftest import FLOW, Server, jobflow, template

from .conftest import Webhook, payload, put
from .test_reviews import JF, JT, refused, response


@pytest.fixture(scope="module")
def seeded(cluster: Server) -> Server:
    """Template `shared`; flow `uses` (entry `a` on template shared) Running."""
    put(cluster, template("shared", "true"))
    flow = jobflow("uses", "a")
    flow["spec"]["flows"][0]["template"] = "shared"
    put(cluster, flow, phase="Running")
    return cluster


def create(spec: dict[str, Any], validation: str | None = None) -> dict[str, Any]:
    """A JobFlow CREATE review of flow `args` with this spec."""
    sent = payload("jobflow-create")
    request = sent["request"]
    request["name"] = "args"
    request["object"] = {
        "apiVersion": "flow.volcano.sh/v1alpha1",
        "kind": "JobFlow",
        "metadata": {"name": "args", "namespace": "default"},
        "spec": spec,
    }
    if validation is not None:
        request["options"] = {"fieldValidation": validation}
    return sent


def test_a_required_argument_without_a_value_is_refused(webhook: Webhook, seeded: Server) -> None:
    spec = {"arguments": [{"name": "threshold"}], "flows": [{"name": "a", "template": "shared"}]}
    sent = create(spec)
    refused(
        response(webhook.review(JF, sent), sent),
        422,
        'spec.arguments[0]: required argument "threshold" has no value: give it a value in the '
        "manifest (spec.arguments[0].value)",
    )
    spec["arguments"][0]["value"] = "0.9"
    sent = create(spec)
    found = response(webhook.review(JF, sent), sent)
    assert found["allowed"] is True, found


def test_a_template_used_under_another_entry_name_is_not_deleted(
    webhook: Webhook, seeded: Server
) -> None:
    sent = payload("jobtemplate-delete")
    request = sent["request"]
    request["name"] = request["oldObject"]["metadata"]["name"] = "shared"
    refused(
        response(webhook.review(JT, sent), sent),
        403,
        'cannot delete JobTemplate "shared": unfinished JobFlow(s) uses use it; stop or delete '
        "them first",
    )


ARGO_SPEC = {"flows": [{"name": "a", "template": "shared", "withItems": [1, 2]}]}
WITH_ITEMS = (
    'unknown field "spec.flows[0].withItems" (use "for" (items, fromArgument or fromOutput): '
    "docs/flow-features.md section 19)"
)


def test_an_unknown_field_says_the_vcflow_field_warned_or_refused(
    webhook: Webhook, seeded: Server
) -> None:
    sent = create(ARGO_SPEC, "Warn")
    warned = response(webhook.review(JF, sent), sent)
    assert warned["allowed"] is True
    assert warned["warnings"] == [WITH_ITEMS]
    sent = create(ARGO_SPEC, "Strict")
    refused(response(webhook.review(JF, sent), sent), 422, f"spec.flows[0].withItems: {WITH_ITEMS}")


def test_the_server_answers_unknown_fields_as_the_webhook(seeded: Server) -> None:
    """kube-apiserver's fieldValidation: Warn when not given (a Warning header), Strict (what
    kubectl sends) refuses with the same line, Ignore says nothing."""
    body = create(ARGO_SPEC)["request"]["object"]
    with seeded.client() as client:
        path = f"{FLOW}/jobflows"
        warned = client.post(path, params={"dryRun": "All"}, json=body)
        assert warned.status_code == 201, warned.text
        assert [w.split('"', 1)[1][:-1] for w in warned.headers.get_list("warning")] == [
            WITH_ITEMS.replace('"', '\\"')
        ]
        strict = client.post(path, params={"dryRun": "All", "fieldValidation": "Strict"}, json=body)
        assert strict.status_code == 422
        assert strict.json()["message"] == (
            f'JobFlow.flow.volcano.sh "args" is invalid: spec.flows[0].withItems: {WITH_ITEMS}'
        )
        ignored = client.post(
            path, params={"dryRun": "All", "fieldValidation": "Ignore"}, json=body
        )
        assert ignored.status_code == 201 and "warning" not in ignored.headers
