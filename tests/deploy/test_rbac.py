"""deploy/'s RBAC grants exactly what `vcflow.kubeapi.permissions` lists — the operator's
ClusterRole, its leader-election Role in its own namespace and its Role for vc-scheduler's
ConfigMap in volcano-system (that one name), the webhook's read-only ClusterRole — each
bound to the ServiceAccount its Deployment runs as; no wildcard, no resourceNames but the
table's, no non-resource URLs, nothing else."""

from __future__ import annotations

from typing import Any

import pytest

from vcflow.kubeapi import permissions, resources
from vcflow.kubeapi.permissions import Rule

from .rendered import NAMESPACE, REPO, base, one

Grant = tuple[str, str, str, tuple[str, ...]]  # (apiGroup, resource, verb, resourceNames)


def grants(rules: list[dict[str, Any]]) -> set[Grant]:
    found: set[Grant] = set()
    for rule in rules:
        assert set(rule) - {"resourceNames"} == {"apiGroups", "resources", "verbs"}, rule
        names = tuple(rule.get("resourceNames") or ())
        for group in rule["apiGroups"]:
            for resource in rule["resources"]:
                for verb in rule["verbs"]:
                    assert "*" not in (group, resource, verb), rule
                    grant = (group, resource, verb, names)
                    assert grant not in found, f"granted twice: {rule}"
                    found.add(grant)
    return found


def needed(table: tuple[Rule, ...]) -> set[Grant]:
    return {(r.group, r.resource, verb, r.names) for r in table for verb in r.verbs}


@pytest.mark.parametrize(
    ("kind", "name", "table"),
    [
        ("ClusterRole", "vcflow-operator", permissions.OPERATOR),
        ("Role", "vcflow-operator-leader-election", permissions.OPERATOR_NAMESPACED),
        ("Role", "vcflow-operator-scheduler-config", permissions.OPERATOR_SCHEDULER),
        ("ClusterRole", "vcflow-webhook", permissions.WEBHOOK),
    ],
    ids=["operator", "operator-leases", "operator-scheduler-config", "webhook"],
)
def test_a_role_grants_exactly_the_table(kind: str, name: str, table: tuple[Rule, ...]) -> None:
    role = one(base(), kind, name)
    assert grants(role["rules"]) == needed(table)


@pytest.mark.parametrize(
    ("binding", "role", "deployment"),
    [
        ("ClusterRoleBinding", "ClusterRole/vcflow-operator", "vcflow-operator"),
        ("RoleBinding", "Role/vcflow-operator-leader-election", "vcflow-operator"),
        ("RoleBinding", "Role/vcflow-operator-scheduler-config", "vcflow-operator"),
        ("ClusterRoleBinding", "ClusterRole/vcflow-webhook", "vcflow-webhook"),
    ],
)
def test_each_role_is_bound_to_its_deployments_service_account(
    binding: str, role: str, deployment: str
) -> None:
    kind, _, name = role.partition("/")
    bound = one(base(), binding, name)
    assert bound["roleRef"] == {
        "apiGroup": "rbac.authorization.k8s.io",
        "kind": kind,
        "name": name,
    }
    account = one(base(), "Deployment", deployment)["spec"]["template"]["spec"]
    assert bound["subjects"] == [
        {"kind": "ServiceAccount", "name": account["serviceAccountName"], "namespace": NAMESPACE}
    ]
    one(base(), "ServiceAccount", account["serviceAccountName"])
    if binding == "RoleBinding":
        where = NAMESPACE if "leader" in name else permissions.SCHEDULER_NAMESPACE
        assert bound["metadata"]["namespace"] == where
        assert one(base(), kind, name)["metadata"]["namespace"] == where


def test_no_other_role_or_binding_is_rendered() -> None:
    kinds = {"ClusterRole", "Role", "ClusterRoleBinding", "RoleBinding"}
    assert sorted(o["metadata"]["name"] for o in base() if o["kind"] in kinds) == [
        "vcflow-operator",
        "vcflow-operator",
        "vcflow-operator-leader-election",
        "vcflow-operator-leader-election",
        "vcflow-operator-scheduler-config",
        "vcflow-operator-scheduler-config",
        "vcflow-webhook",
        "vcflow-webhook",
    ]


def test_the_table_names_the_kinds_vcflow_serves_by_their_api_names() -> None:
    """The table's flow, vcjob and pod rules are the resources' own group and plural (a
    rename in kubeapi/resources.py moves RBAC with it), and the write verbs the controllers
    use on the flows' own objects are there."""
    table = needed(permissions.OPERATOR)
    for resource in (resources.JOBFLOWS, resources.JOBTEMPLATES, resources.VCJOBS):
        assert {(resource.group, resource.plural, v, ()) for v in ("get", "list", "watch")} <= table
    assert (resources.VCJOBS.group, resources.VCJOBS.plural, "create", ()) in table
    assert (resources.JOBFLOWS.group, "jobflows/status", "patch", ()) in table
    assert ("", "pods", "create", ()) not in table  # Volcano's job controller makes the pods
    assert not {g for g in table if g[1] in ("secrets", "configmaps")}


def _doc_tables() -> list[list[tuple[str, str, tuple[str, ...], str]]]:
    """The RBAC tables of docs/kubernetes.md's "RBAC explained", in order."""
    text = (REPO / "docs" / "kubernetes.md").read_text()
    section = text.split("## RBAC explained", 1)[1].split("\n## ", 1)[0]
    tables: list[list[tuple[str, str, tuple[str, ...], str]]] = []
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if line.startswith("| API group |"):
            tables.append([])
        elif line.startswith("| ") and len(cells) == 4 and not line.startswith("| ---"):
            group = "" if cells[0] == "(core)" else cells[0]
            tables[-1].append((group, cells[1], tuple(cells[2].split(", ")), cells[3]))
    return tables


def test_the_docs_rbac_tables_are_the_table() -> None:
    wanted = [
        [(r.group, r.resource, r.verbs, r.why) for r in table]
        for table in (
            permissions.OPERATOR,
            permissions.OPERATOR_NAMESPACED,
            permissions.OPERATOR_SCHEDULER,
            permissions.WEBHOOK,
        )
    ]
    assert _doc_tables() == wanted
