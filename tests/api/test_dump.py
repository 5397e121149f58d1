"""`WireModel.to_dict`, the dump every store write and the runtime use, is built in Python
for speed: it must give exactly what pydantic's own dump (`model_dump(by_alias=True,
mode="json")`, through `_given_or_changed`) gives — the same keys, in the same order, with
the same values — for every manifest the project carries and for objects edited in place
the ways the controllers and the runtime edit them."""

from __future__ import annotations

import datetime
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pydantic
import pytest
import yaml

from vcflow.api.jobflow import JobFlow
from vcflow.api.meta import Resource
from vcflow.api.phases import DependencyStrategy, JobPhase
from vcflow.api.pod import Pod
from vcflow.api.vcjob import VCJob, VCJobStatus
from vcflow.store.base import default_kinds

ROOT = Path(__file__).resolve().parents[2]
KINDS = {(info.api_version, info.kind): info.model for info in default_kinds().all()}


def exact(model: Resource | pydantic.BaseModel) -> None:
    assert isinstance(model, Resource | VCJobStatus)
    fast = model.to_dict()
    slow = model.model_dump(by_alias=True, mode="json")
    assert json.dumps(fast) == json.dumps(slow)  # keys, order and values


def _objects(data: Any) -> Iterator[dict[str, Any]]:
    if isinstance(data, dict):
        if (data.get("apiVersion"), data.get("kind")) in KINDS:
            yield data
        for value in data.values():
            yield from _objects(value)
    elif isinstance(data, list):
        for value in data:
            yield from _objects(value)


def corpus() -> list[Resource]:
    """Every object of a known kind in the examples and the conformance cases that parses."""
    found = []
    files = sorted([*ROOT.glob("examples/**/*.yaml"), *ROOT.glob("tests/conformance/**/*.yaml")])
    for path in files:
        for document in yaml.safe_load_all(path.read_text()):
            for data in _objects(document):
                model = KINDS[(data["apiVersion"], data["kind"])]
                try:
                    found.append(model.model_validate(data))
                except pydantic.ValidationError:
                    continue  # the cases hold invalid input on purpose
    return found


def test_every_object_the_project_carries_dumps_exactly() -> None:
    objects = corpus()
    assert len(objects) > 100  # the corpus is really read
    for model in objects:
        exact(model)


def test_in_place_edits_and_unusual_extras_dump_exactly() -> None:
    pod = Pod.model_validate(
        {
            "metadata": {"name": "p"},
            "spec": {
                "containers": [{"name": "c", "command": ["true"]}],
                "nodeSelector": {1: "int key"},
                "when": datetime.date(2020, 1, 1),
                "at": datetime.datetime(2020, 1, 1, 12, tzinfo=datetime.UTC),
                "ratio": 0.5,
                "huge": float("inf"),
                "pair": ("a", 1),
                "nested": [{"deep": [{"x": None}]}],
            },
        }
    )
    pod.metadata.labels["edited"] = "in place"  # a default dict, never assigned
    pod.metadata.finalizers.append("vcflow.sh/x")
    pod.metadata.generation = 0  # assigned its default: kept (given)
    exact(pod)
    exact(Pod.model_validate({"metadata": {"name": "bare"}}))

    job = VCJob.model_validate({"metadata": {"name": "j"}, "spec": {"tasks": []}})
    job.status = VCJobStatus.model_validate(
        {"state": {"phase": JobPhase.RUNNING}, "conditions": [{"status": "Running"}]}
    )
    exact(job)

    flow = JobFlow.model_validate(
        {
            "metadata": {"name": "f"},
            "spec": {"flows": [{"name": "a"}, {"name": "b", "dependsOn": {"targets": ["a"]}}]},
        }
    )
    deps = flow.flows[1].depends_on
    assert deps is not None
    deps.strategy = DependencyStrategy.ANY  # an enum member, not its text
    exact(flow)


@pytest.mark.parametrize("model", [Pod, VCJob, JobFlow])
def test_defaults_alone_dump_as_pydantic_does(model: type[Resource]) -> None:
    exact(model())
