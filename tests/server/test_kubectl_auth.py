"""`kubectl auth can-i` and `kubectl auth whoami` against `vcflow server`: its token may do
all the server serves, so `can-i` says yes to a served resource and verb, and no, with
why, to what the server does not serve; `--list` lists the served resources. Before, every
one of them was a 404 (`Error from server (NotFound)`)."""

from __future__ import annotations

import threading

from vcflow.server.app import create_app
from vcflow.store import MemoryStore

from .asgi import Client
from .test_kubectl import Make, kubectl, split

__all__ = ["kubectl"]  # (the fixture, used by name)


def test_can_i_answers_for_what_the_server_serves(kubectl: Make) -> None:
    kube = kubectl("--runtime", "none", "--controllers", "off")
    assert kube.ok("auth", "can-i", "create", "jobflows") == "yes\n"
    assert kube.ok("auth", "can-i", "delete", "vcjob", "-n", "team-a") == "yes\n"
    assert kube.ok("auth", "can-i", "get", "pods", "--subresource=log") == "yes\n"
    assert kube.ok("auth", "can-i", "get", "/metrics") == "yes\n"
    no = kube.run("auth", "can-i", "create", "deployments.apps")
    assert (no.returncode, no.stdout) == (1, "no - vcflow server does not serve deployments.apps\n")
    no = kube.run("auth", "can-i", "deletecollection", "jf")
    assert (no.returncode, no.stdout) == (
        1,
        'no - vcflow server does not "deletecollection" jobflows.flow.volcano.sh\n',
    )
    rows = split(kube.ok("auth", "can-i", "--list"))
    assert ["jobflows.flow.volcano.sh", "[]", "[]"] in [row[:3] for row in rows]
    assert ["pods/log", "[]", "[]", "[get]"] in rows
    assert split(kube.ok("auth", "whoami"))[1] == ["Username", "vcflow"]


def test_a_json_review_is_answered_too() -> None:
    """(kubectl before 1.33 and the Python client send the review as JSON)"""
    client = Client(create_app(MemoryStore(), stopping=threading.Event()))
    review = {
        "apiVersion": "authorization.k8s.io/v1",
        "kind": "SelfSubjectAccessReview",
        "spec": {"resourceAttributes": {"verb": "watch", "group": "", "resource": "pods"}},
    }
    answer = client.request(
        "POST", "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", json=review
    )
    assert answer.status_code == 201, answer.text
    assert answer.json()["status"]["allowed"] is True
    wrong = client.request(
        "POST", "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", json={"kind": "Pod"}
    )
    assert wrong.status_code == 400
