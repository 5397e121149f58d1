"""Field selectors (`fieldSelector=metadata.name=x,status.phase!=Failed`) as the Kubernetes
API takes them: `=`, `==` and `!=` terms, on the fields kube-apiserver lets each kind select
by (`metadata.name` and `metadata.namespace` for all; an Event's `involvedObject.*`,
`reason`, `type`, ...; a Pod's `spec.nodeName`, `status.phase`, ...). Any other field is a
400 `field label not supported`. Used by `requests` (parsing) and `listing`/`watching`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from vcflow.server.status import ApiError

COMMON = frozenset({"metadata.name", "metadata.namespace"})
#: the fields kube-apiserver selects by, beyond COMMON, per kind
BY_KIND = {
    "Event": frozenset(
        {
            "involvedObject.kind",
            "involvedObject.namespace",
            "involvedObject.name",
            "involvedObject.uid",
            "involvedObject.apiVersion",
            "involvedObject.resourceVersion",
            "involvedObject.fieldPath",
            "reason",
            "reportingComponent",
            "source",
            "type",
        }
    ),
    "Pod": frozenset(
        {
            "spec.nodeName",
            "spec.restartPolicy",
            "spec.schedulerName",
            "spec.serviceAccountName",
            "spec.hostNetwork",
            "status.phase",
            "status.podIP",
            "status.nominatedNodeName",
        }
    ),
    "Secret": frozenset({"type"}),
}


@dataclass(frozen=True)
class Term:
    path: str
    equal: bool  # `=`/`==` (True) or `!=`
    value: str

    def matches(self, data: dict[str, Any]) -> bool:
        return (_value(data, self.path) == self.value) == self.equal


@dataclass(frozen=True)
class FieldSelector:
    terms: tuple[Term, ...] = ()

    def matches(self, data: dict[str, Any]) -> bool:
        return all(term.matches(data) for term in self.terms)

    def __bool__(self) -> bool:
        return bool(self.terms)

    def name(self) -> str | None:
        """The name a `metadata.name=` term pins (None if none does): one object to read."""
        return next((t.value for t in self.terms if t.path == "metadata.name" and t.equal), None)


def parse(text: str, kind: str) -> FieldSelector:
    """The selector of `text` for objects of `kind`; 400 naming a bad term or field."""
    allowed = COMMON | BY_KIND.get(kind, frozenset())
    terms = []
    for term in filter(None, (t.strip() for t in text.split(","))):
        if "!=" in term:
            path, _, value = term.partition("!=")
            equal = False
        elif "==" in term:
            path, _, value = term.partition("==")
            equal = True
        elif "=" in term:
            path, _, value = term.partition("=")
            equal = True
        else:
            raise ApiError(400, f'invalid field selector: "{term}": give field=value')
        path = path.strip()
        if path not in allowed:
            raise ApiError(400, f'field label not supported: "{path}"')
        terms.append(Term(path, equal, value.strip()))
    return FieldSelector(tuple(terms))


def _value(data: dict[str, Any], path: str) -> str:
    """The field at a dotted path as kube compares it: text, "" when absent."""
    found: Any = data
    for part in path.split("."):
        if not isinstance(found, dict):
            return ""
        found = found.get(part)
    if found is None:
        return ""
    if isinstance(found, bool):
        return "true" if found else "false"
    if isinstance(found, dict):  # (an Event's `source`: its component)
        return str(found.get("component") or "")
    return str(found)
