"""`kubectl exec`, `attach` and `port-forward` against `vcflow server`: a pod is a local
process, so they are refused with why (400), not with the 404 that read as a missing pod
(`Error from server (NotFound): the server could not find the requested resource`); a
pod that does not exist is still a 404. (In process: the app around a MemoryStore.)"""

from __future__ import annotations

import threading

import pytest

from vcflow.server.app import create_app
from vcflow.store import MemoryStore

from .asgi import Client
from .conftest import CORE


@pytest.mark.parametrize(
    ("method", "sub"),
    [
        ("POST", "exec?command=ls&stdout=true"),
        ("GET", "exec"),
        ("POST", "attach"),
        ("POST", "portforward"),
    ],
)
def test_exec_attach_and_port_forward_say_why_not(method: str, sub: str) -> None:
    client = Client(create_app(MemoryStore(), stopping=threading.Event()))
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p"},
        "spec": {"containers": [{"name": "c", "image": "x"}]},
    }
    assert client.request("POST", f"{CORE}/pods", json=pod).status_code == 201
    answer = client.request(method, f"{CORE}/pods/p/{sub}")
    assert answer.status_code == 400
    assert answer.json()["message"] == (
        'vcflow server serves no exec, attach or port-forward: pod "p" is a process on the '
        "server's machine, not a container (its log: kubectl logs p)"
    )
    assert client.request(method, f"{CORE}/pods/nope/{sub}").status_code == 404
    assert "not found" in client.request(method, f"{CORE}/pods/nope/{sub}").json()["message"]
