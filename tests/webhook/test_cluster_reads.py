"""What one review costs the cluster: a JobFlow review reads the templates its entries name,
each by name, not every JobTemplate of the namespace (issue 25, defect 11: 36 lists in one
run), so a review's cost does not grow with the namespace. Counted on the cluster's side —
a real `vcflow server` of its own, whose /metrics counts every request by verb and resource
(`vcflow_api_requests_total`) — around reviews POSTed to a real `vcflow webhook` on it."""

from __future__ import annotations

import re
from collections import Counter
from typing import Any

import pytest
from tests.server.conftest import Server, template

from .conftest import Processes, Tls, Webhook, kubeconfig, payload, put

TEMPLATES = 50
COUNTED = re.compile(r"^vcflow_api_requests_total\{(.*)\} (\S+)$")


@pytest.fixture(scope="module")
def crowded(processes: Processes) -> Server:
    """A cluster of its own whose namespace holds TEMPLATES JobTemplates."""
    cluster = processes.cluster()
    for i in range(TEMPLATES):
        put(cluster, template(f"t{i:02d}", "true"))
    return cluster


@pytest.fixture(scope="module")
def hook(processes: Processes, tls: Tls, crowded: Server) -> Webhook:
    return processes.webhook(tls, kubeconfig(crowded))


def requests(cluster: Server) -> Counter[tuple[str, str]]:
    """The API requests the cluster has answered so far, by (verb, resource)."""
    with cluster.client() as client:
        text = client.get("/metrics").text
    found: Counter[tuple[str, str]] = Counter()
    for line in text.splitlines():
        match = COUNTED.match(line)
        if match:
            labels = dict(re.findall(r'(\w+)="([^"]*)"', match.group(1)))
            if labels["resource"]:  # ("": /metrics, discovery)
                found[labels["verb"], labels["resource"]] += int(float(match.group(2)))
    return found


def review_of(*names: str) -> dict[str, Any]:
    sent = payload("jobflow-create")
    flows: list[dict[str, Any]] = [{"name": names[0]}]
    flows += [{"name": n, "dependsOn": {"targets": [names[0]]}} for n in names[1:]]
    sent["request"]["object"]["spec"]["flows"] = flows
    return sent


def test_a_flow_review_reads_only_the_templates_it_names(hook: Webhook, crowded: Server) -> None:
    for names in (("t07", "t42"), ("t07", "missing")):
        before = requests(crowded)
        answer = hook.review("/validate-jobflow", review_of(*names))["response"]
        assert answer["allowed"] is True
        assert ("missing" in names) == bool(answer.get("warnings")), answer
        assert requests(crowded) - before == Counter({("GET", "jobtemplates"): 2})
