"""Contract: admission on every write, and `apply` — all-or-nothing, kubectl outcomes."""

from __future__ import annotations

from typing import Any

import pytest

from vcflow.api.errors import ValidationFailed
from vcflow.api.jobflow import JobFlow
from vcflow.api.jobtemplate import JobTemplate
from vcflow.api.vcjob import VCJob
from vcflow.store import Outcome
from vcflow.store.engine import StoreEngine

from .conftest import finished, flow, template, vcjob


def test_create_runs_admission(store: StoreEngine) -> None:
    with pytest.raises(ValidationFailed, match="jobflow Flow is not DAG"):
        store.create(flow("f", ("a", ["b"]), ("b", ["a"])))
    with pytest.raises(ValidationFailed, match=r"metadata\.name"):
        store.create(vcjob("Bad_Name"))
    assert store.resource_version() == 0


def test_admit_false_skips_admission(store: StoreEngine) -> None:
    store.create(vcjob("Bad_Name"), admit=False)
    assert [j.name for j in store.list(VCJob)] == ["Bad_Name"]


def test_flow_spec_update_is_refused(store: StoreEngine) -> None:
    """compatibility row 10: spec updates rejected, metadata updates allowed."""
    created = store.create(flow("f", "a"))
    changed = flow("f", "a", "b")
    changed.metadata.resource_version = created.metadata.resource_version
    with pytest.raises(ValidationFailed, match="jobflow spec updates are not supported"):
        store.update(changed)
    created.metadata.labels = {"team": "x"}
    assert store.update(created).metadata.labels == {"team": "x"}


def test_flow_is_checked_against_stored_templates(store: StoreEngine) -> None:
    store.create(template("a"))
    long_flow = "f" * 60  # generated pod name "<flow>-a-t-0" exceeds 63 characters
    with pytest.raises(ValidationFailed, match="generated pod name"):
        store.create(flow(long_flow, "a"))


def test_apply_outcomes(store: StoreEngine) -> None:
    objects = [flow("f", "a", ("b", ["a"])), template("a"), template("b")]
    first = store.apply(objects)
    assert [r.outcome for r in first] == [Outcome.CREATED] * 3
    # (one write each; a Kubernetes API store writes the templates first)
    assert sorted(r.object.metadata.resource_version for r in first) == ["1", "2", "3"]
    again = store.apply(objects)
    assert [r.outcome for r in again] == [Outcome.UNCHANGED] * 3
    assert store.resource_version() == 3
    relabelled = template("a")
    relabelled.metadata.labels = {"v": "2"}
    third = store.apply([relabelled, template("b", queue="q")])
    assert [r.outcome for r in third] == [Outcome.CONFIGURED, Outcome.CONFIGURED]
    assert [r.object.metadata.generation for r in third] == [1, 2]


def test_apply_keeps_status_and_server_metadata(store: StoreEngine) -> None:
    owner = store.create(vcjob("owner"))
    store.create(vcjob("j", owners=(owner,), finalizers=["x/y"]))
    stored = store.get(VCJob, "default", "j")
    stored.status = VCJob.model_validate(
        {"apiVersion": stored.api_version, "kind": "Job", "status": {"state": {"phase": "Running"}}}
    ).status
    store.update_status(stored)
    manifest = vcjob("j", labels={"new": "label"})
    (result,) = store.apply([manifest])
    assert result.outcome is Outcome.CONFIGURED
    got = store.get(VCJob, "default", "j")
    assert got.phase == "Running"
    assert got.metadata.finalizers == ["x/y"]
    assert got.metadata.owner_references[0].name == "owner"
    assert got.metadata.labels == {"new": "label"}


def test_apply_resolves_templates_in_the_batch(store: StoreEngine) -> None:
    (result,) = store.apply([flow("f", "a")])
    assert any("TemplateNotFound" in str(w) for w in result.warnings)
    results = store.apply([flow("g", "a"), template("a")])
    assert [r.warnings for r in results] == [(), ()]


def test_apply_is_all_or_nothing(store: StoreEngine) -> None:
    store.create(template("a"))
    batch = [
        template("b"),
        flow("ok", "a"),
        flow("cyclic", ("x", ["y"]), ("y", ["x"])),
        vcjob("Bad_Name"),
    ]
    with pytest.raises(ValidationFailed) as caught:
        store.apply(batch)
    messages = [str(e) for e in caught.value.errors]
    assert any("JobFlow default/cyclic" in m for m in messages)
    assert any("Job default/Bad_Name" in m for m in messages)
    assert [t.name for t in store.list(JobTemplate)] == ["a"]
    assert store.list(JobFlow) == []
    assert store.resource_version() == 1
    assert [e.object.name for e in store.events_since(0)] == ["a"]


def test_apply_refuses_duplicates_in_a_batch(store: StoreEngine) -> None:
    with pytest.raises(ValidationFailed, match="the batch holds this object twice"):
        store.apply([template("a"), template("a")])


def test_apply_reviews_flow_updates(store: StoreEngine) -> None:
    store.apply([flow("f", "a")])
    with pytest.raises(ValidationFailed, match="spec updates are not supported"):
        store.apply([flow("f", "a", "b")])


def test_apply_reads_each_namespaces_templates_once(
    store: StoreEngine, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The flows of a batch share their namespace's templates (stored, then the batch's
    laid over them): one store read per namespace, not one per flow."""
    store.create(template("a"))
    store.create(template("a", ns="other"))
    reads: list[tuple[str, str | None]] = []
    listed = store.list

    def counted(kind: type[Any], namespace: str | None = None, *args: Any) -> list[Any]:
        reads.append((kind.__name__, namespace))
        return listed(kind, namespace, *args)

    monkeypatch.setattr(store, "list", counted)
    batch = [
        *(flow(f"f{i}", "a", "b") for i in range(3)),
        template("b"),
        flow("g", "a", "b", ns="other"),
    ]
    results = store.apply(batch)
    assert reads == [("JobTemplate", "default"), ("JobTemplate", "other")]
    assert [r.warnings for r in results[:4]] == [(), (), (), ()]
    (missing,) = results[4].warnings  # the batch's b is in namespace default
    assert 'JobTemplate "b" not found' in str(missing)


def test_apply_drops_a_given_status_on_create_and_on_update(store: StoreEngine) -> None:
    # an exported finished flow applied again (after a delete) must run its jobs again
    store.apply([template("a")])
    store.apply([finished(flow("f", "a"))])
    assert store.phase(JobFlow, "default", "f") == ""
    store.update_status_data(JobFlow, "default", "f", {"state": {"phase": "Running"}})
    store.apply([finished(flow("f", "a"), "Failed")])
    assert store.phase(JobFlow, "default", "f") == "Running"
