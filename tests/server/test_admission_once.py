"""A write through the server runs admission once: the store's review gives both the
errors and the warnings (`Store.create_reviewed`, `update_reviewed`), the server does not
review again for them. Counted at the one entry point, `admit.review_write`, for each
kind of write (create, PUT, PATCH, each as a dryRun too, DELETE) in process: the app
around a MemoryStore."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import pytest

from vcflow.server.app import create_app
from vcflow.store import MemoryStore, admit

from .asgi import Client
from .conftest import FLOW, jobflow, template

MERGE = {"Content-Type": "application/merge-patch+json"}


@pytest.fixture
def client() -> Iterator[Client]:
    yield Client(create_app(MemoryStore(), stopping=threading.Event()))


@pytest.fixture
def reviews(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The operations admission reviewed, one entry per review."""
    seen: list[str] = []
    review_write = admit.review_write

    def counted(obj: Any, **options: Any) -> Any:
        seen.append(str(options["operation"]))
        return review_write(obj, **options)

    monkeypatch.setattr(admit, "review_write", counted)
    return seen


def _odd(name: str) -> dict[str, Any]:
    """A template with an unknown field: admission warns of it."""
    body = template(name, "true")
    body["spec"]["bogus"] = 1
    return body


@pytest.mark.parametrize("dry_run", [False, True])
def test_each_write_is_reviewed_once(client: Client, reviews: list[str], dry_run: bool) -> None:
    query = "?dryRun=All" if dry_run else ""
    assert client.request("POST", f"{FLOW}/jobtemplates", json=template("a", "true")).is_success
    reviews.clear()

    created = client.request("POST", f"{FLOW}/jobtemplates{query}", json=_odd("b"))
    assert created.status_code == 201
    assert created.headers.get_list("warning") == ['299 - "unknown field \\"spec.bogus\\""']
    assert reviews == ["CREATE"]

    reviews.clear()
    put = client.request("PUT", f"{FLOW}/jobtemplates/a{query}", json=_odd("a"))
    assert put.status_code == 200 and put.headers.get_list("warning")
    assert reviews == ["UPDATE"]

    reviews.clear()
    patch = {"metadata": {"labels": {"k": "v"}}, "spec": {"bogus": 2}}
    patched = client.request("PATCH", f"{FLOW}/jobtemplates/a{query}", json=patch, headers=MERGE)
    assert patched.status_code == 200 and patched.headers.get_list("warning")
    assert reviews == ["UPDATE"]

    reviews.clear()
    assert client.request("DELETE", f"{FLOW}/jobtemplates/a{query}").status_code == 200
    assert reviews == ["DELETE"]


def test_a_refused_write_is_reviewed_once(client: Client, reviews: list[str]) -> None:
    cyclic = jobflow("f", "a<b", "b<a")
    assert client.request("POST", f"{FLOW}/jobflows", json=cyclic).status_code == 422
    assert reviews == ["CREATE"]
    reviews.clear()
    strict = client.request("POST", f"{FLOW}/jobtemplates?fieldValidation=Strict", json=_odd("c"))
    assert strict.status_code == 422
    assert reviews == ["CREATE"]
