"""Label selectors: parsing (pure) and list filtering on every backend."""

from __future__ import annotations

import pytest

from vcflow.api.vcjob import VCJob
from vcflow.store import InvalidSelector, Selector
from vcflow.store.base import batched
from vcflow.store.engine import StoreEngine

from .conftest import vcjob

LABELS = {"app": "web", "tier": "front", "empty": ""}


@pytest.mark.parametrize(
    ("text", "matches"),
    [
        ("", True),
        ("app=web", True),
        ("app==web", True),
        ("app=db", False),
        ("app!=db", True),
        ("missing!=x", True),
        ("app", True),
        ("missing", False),
        ("!missing", True),
        ("!app", False),
        ("app in (db, web)", True),
        ("app in (db)", False),
        ("app notin (db)", True),
        ("missing notin (db)", True),
        ("app=web,tier=front", True),
        ("app=web,tier=back", False),
        (" app = web , tier ", True),
        ("empty=", True),
        ("volcano.sh/createdByJobFlow=default.f", False),
    ],
)
def test_selector_matches(text: str, matches: bool) -> None:
    assert Selector.parse(text).matches(LABELS) is matches


@pytest.mark.parametrize("text", ["a=b=c", "=b", "a in b", "!a=b", "a in (x", "a b"])
def test_invalid_selector(text: str) -> None:
    with pytest.raises(InvalidSelector, match="invalid label selector term"):
        Selector.parse(text)


def test_selector_round_trips_and_hints() -> None:
    selector = Selector.parse("a!=1,b in (y,x),c=3,d,!e")
    assert str(selector) == "a!=1,b in (x,y),c=3,d,!e"
    assert selector.index_hint() == ("c", "3")
    assert Selector.parse("a!=1").index_hint() is None
    assert Selector.coerce({"k": "v"}).index_hint() == ("k", "v")


def test_list_by_label(store: StoreEngine) -> None:
    for i in range(6):
        labels = {"flow": f"f{i % 2}", "i": str(i)}
        store.create(vcjob(f"j{i}", "ns1" if i < 4 else "ns2", labels=labels))
    names = lambda **kw: [j.name for j in store.list(VCJob, **kw)]  # noqa: E731
    assert names(label_selector="flow=f0") == ["j0", "j2", "j4"]
    assert names(namespace="ns1", label_selector="flow=f0") == ["j0", "j2"]
    assert names(label_selector={"flow": "f1", "i": "3"}) == ["j3"]
    assert names(label_selector="flow=f1,i!=3") == ["j1", "j5"]
    assert names(label_selector="i in (1,2)") == ["j1", "j2"]
    assert names(label_selector="flow=nope") == []


def test_label_index_follows_updates_and_deletes(store: StoreEngine) -> None:
    job = store.create(vcjob("a", labels={"k": "v1"}))
    job.metadata.labels = {"k": "v2"}
    store.update(job)
    assert store.list(VCJob, label_selector="k=v1") == []
    assert [j.name for j in store.list(VCJob, label_selector="k=v2")] == ["a"]
    store.delete(VCJob, "default", "a")
    assert store.list(VCJob, label_selector="k=v2") == []


def test_list_many_by_label(store: StoreEngine) -> None:
    """Large lists by label stay correct (the benchmark lists 10,000 vcjobs this way)."""
    with batched(store):
        for i in range(2000):
            store.create(vcjob(f"j{i:04}", labels={"flow": f"f{i % 4}"}), admit=False)
    found = store.list(VCJob, label_selector="flow=f3")
    assert len(found) == 500
    assert found[0].name == "j0003"
