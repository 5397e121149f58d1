"""The webhook on examples/ml-sweep-lite, as kube-apiserver calls it (AdmissionReview v1
over HTTPS to a real `vcflow webhook` process): the example's JobFlow — arguments, `when`
on outputs and arguments, `switch`, `onExit` — is allowed; the same flow with a `when`
reading an argument it does not declare is refused, the field named."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml
from tests.server.conftest import Server

from .conftest import Webhook, payload, put
from .test_reviews import JF, response

EXAMPLE = Path(__file__).parents[2] / "examples" / "ml-sweep-lite" / "flow.yaml"


def example() -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The example's JobFlow and its JobTemplates."""
    objects = [o for o in yaml.safe_load_all(EXAMPLE.read_text()) if o]
    flows = [o for o in objects if o["kind"] == "JobFlow"]
    assert len(flows) == 1
    return flows[0], [o for o in objects if o["kind"] == "JobTemplate"]


@pytest.fixture(scope="module")
def seeded(cluster: Server) -> Server:
    """The example's templates (named as in the example, used by no other test)."""
    for template in example()[1]:
        put(cluster, template)
    return cluster


def create(flow: dict[str, Any]) -> dict[str, Any]:
    """A JobFlow CREATE review of `flow`, in namespace default."""
    sent = payload("jobflow-create")
    request = sent["request"]
    request["name"] = flow["metadata"]["name"]
    obj = copy.deepcopy(flow)
    obj["metadata"] = {"name": flow["metadata"]["name"], "namespace": "default"}
    request["object"] = obj
    return sent


def test_the_example_is_allowed_and_an_undeclared_argument_refused(
    webhook: Webhook, seeded: Server
) -> None:
    flow, _ = example()
    sent = create(flow)
    found = response(webhook.review(JF, sent), sent)
    assert found["allowed"] is True, found
    assert "status" not in found and not found.get("warnings"), found

    wrong = copy.deepcopy(flow)
    deploy = next(i for i, e in enumerate(wrong["spec"]["flows"]) if e["name"] == "deploy")
    wrong["spec"]["flows"][deploy]["when"] = "args.missing == '1'"
    sent = create(wrong)
    found = response(webhook.review(JF, sent), sent)
    assert found["allowed"] is False, found
    status = found["status"]
    assert (status["code"], status["reason"]) == (422, "Invalid"), status
    message = status["message"]
    assert message.startswith(f"spec.flows[{deploy}].when: "), message
    assert 'unknown argument "missing"' in message, message
    assert "\n" not in message
