"""The vcflow server's Tables of JobFlows and JobTemplates are kube-apiserver's for vcflow's
CRDs: `kubectl get jf -o wide` prints the same against both. kube-apiserver fills a CRD's
printer column from its JSONPath (a `string` column: the value itself, a list as compact
JSON, an absent field as a null cell); the server printed `vcflow get`'s computed `1/2` in
JOBS, where a cluster prints `["f-a"]`, and `0/2` where a cluster prints nothing.

EXPECTED holds what kube-apiserver v1.37.2 answered (2026-12-02, the test cluster of
docs/test-cluster.md, deploy/crds applied: `GET .../jobflows` with kubectl's Table Accept
header) for the same three flows."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from vcflow.api import clock
from vcflow.api.jobflow import JobFlow
from vcflow.api.jobtemplate import JobTemplate
from vcflow.kubeapi import resources
from vcflow.server import tables

NOW = datetime(2026, 12, 2, 0, 30, tzinfo=UTC)

#: kube-apiserver's columnDefinitions (but Name's description) and cells, recorded
EXPECTED_DEFINITIONS = [
    ("Name", "string", "name", 0),
    ("Status", "string", "", 0),
    ("Age", "date", "", 0),
    ("Jobs", "string", "", 1),
]
EXPECTED_CELLS = [
    ["bare", None, "38s", None],  # created, no status yet
    ["miss", "Running", "19m", '["miss-a"]'],
    ["test", "Succeed", "27m", '["test-a","test-b","test-c","test-d","test-e"]'],
]


def flow(name: str, age: timedelta, status: dict[str, Any] | None) -> JobFlow:
    created = clock.rfc3339(NOW - age)
    data: dict[str, Any] = {
        "metadata": {"name": name, "namespace": "default", "creationTimestamp": created},
        "spec": {"flows": [{"name": "a"}]},
    }
    if status is not None:
        data["status"] = status
    return JobFlow.from_dict(data)


def test_jobflow_rows_are_kube_apiservers_for_the_crd() -> None:
    flows = [
        flow("bare", timedelta(seconds=38), None),
        flow(
            "miss",
            timedelta(minutes=19, seconds=5),
            {"state": {"phase": "Running"}, "completedJobs": ["miss-a"]},
        ),
        flow(
            "test",
            timedelta(minutes=27, seconds=40),
            {"state": {"phase": "Succeed"}, "completedJobs": [f"test-{j}" for j in "abcde"]},
        ),
    ]
    body = tables.table(resources.JOBFLOWS, flows, now=NOW)
    defs = [(c["name"], c["type"], c["format"], c["priority"]) for c in body["columnDefinitions"]]
    assert defs == EXPECTED_DEFINITIONS
    jobs = body["columnDefinitions"][3]["description"]
    assert jobs == "The entries whose vcjob completed (.status.completedJobs)."
    assert [row["cells"] for row in body["rows"]] == EXPECTED_CELLS


def test_an_empty_list_is_printed_as_kube_prints_it() -> None:
    listed = flow("f", timedelta(seconds=5), {"state": {"phase": "Running"}, "completedJobs": []})
    (row,) = tables.table(resources.JOBFLOWS, [listed], now=NOW)["rows"]
    assert row["cells"] == ["f", "Running", "5s", "[]"]


def test_jobtemplate_rows_are_name_and_age() -> None:
    created = clock.rfc3339(NOW - timedelta(minutes=28))
    template = JobTemplate.from_dict(
        {"metadata": {"name": "a", "namespace": "default", "creationTimestamp": created}}
    )
    body = tables.table(resources.JOBTEMPLATES, [template], now=NOW)
    assert [c["name"] for c in body["columnDefinitions"]] == ["Name", "Age"]
    assert body["rows"][0]["cells"] == ["a", "28m"]
