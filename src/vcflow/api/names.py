"""Names: DNS-1123 checks, label and annotation keys and values, the one place job and pod
names are derived, object keys.

Volcano derives names by plain concatenation (reference §2.5), so do we; every caller that
needs a vcjob or pod name goes through `job_name`/`pod_name`. Every check matches the whole
value, as Go's regexps do (`re.fullmatch`: Python's `$` also matches before a trailing
newline, which then passed every check).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import NewType

GROUP_FLOW = "flow.volcano.sh"
GROUP_BATCH = "batch.volcano.sh"
FLOW_API_VERSION = f"{GROUP_FLOW}/v1alpha1"
BATCH_API_VERSION = f"{GROUP_BATCH}/v1alpha1"

LABEL_CREATED_BY_TEMPLATE = "volcano.sh/createdByJobTemplate"
LABEL_CREATED_BY_FLOW = "volcano.sh/createdByJobFlow"

DEFAULT_NAMESPACE = "default"

JobName = NewType("JobName", str)
ObjectKey = NewType("ObjectKey", str)

LABEL_MAX = 63
SUBDOMAIN_MAX = 253
#: The most bytes a object's annotations may hold, keys and values together (Kubernetes'
#: TotalAnnotationSizeLimitB).
ANNOTATIONS_MAX = 256 * 1024
_NAME_PART = (
    "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with "
    "an alphanumeric character"
)


@dataclass(frozen=True)
class _Format:
    """A name format as Kubernetes checks it: its length, then its characters, each
    refused in Kubernetes' words (`part` names the part of a key checked)."""

    pattern: re.Pattern[str]
    limit: int
    mismatch: str
    part: str = ""

    def errors(self, value: str) -> list[str]:
        errors = []
        if len(value) > self.limit:
            errors.append(f"{self.part}must be no more than {self.limit} characters")
        if not self.pattern.fullmatch(value):
            errors.append(self.mismatch)
        return errors


_DNS1123_LABEL = _Format(
    re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?"),
    LABEL_MAX,
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', "
    "and must start and end with an alphanumeric character",
)
_DNS1123_SUBDOMAIN = _Format(
    re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*"),
    SUBDOMAIN_MAX,
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, "
    "'-' or '.', and must start and end with an alphanumeric character",
)
_LABEL_VALUE = _Format(
    re.compile(r"(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?"),
    LABEL_MAX,
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' "
    "or '.', and must start and end with an alphanumeric character",
)
_QUALIFIED_NAME = _Format(
    re.compile(r"([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"),
    LABEL_MAX,
    f"name part {_NAME_PART}",
    part="name part ",
)


def dns1123_label_errors(value: str) -> list[str]:
    """Why `value` is not a DNS-1123 label (namespace, task name); empty when it is."""
    return _DNS1123_LABEL.errors(value)


def dns1123_subdomain_errors(value: str) -> list[str]:
    """Why `value` is not a DNS-1123 subdomain (object names); empty when it is."""
    return _DNS1123_SUBDOMAIN.errors(value)


def label_value_errors(value: str) -> list[str]:
    """Why `value` is not a valid Kubernetes label value; empty when it is."""
    return _LABEL_VALUE.errors(value)


def qualified_name_errors(value: str) -> list[str]:
    """Why `value` is not a Kubernetes qualified name (no prefix part); empty when it is."""
    return _QUALIFIED_NAME.errors(value)


def label_key_errors(key: str) -> list[str]:
    """Why `key` is not a label or annotation key — a qualified name with an optional DNS
    subdomain prefix (`example.com/name`) — in Kubernetes' words (IsQualifiedName); empty
    when it is."""
    parts = key.split("/")
    if len(parts) > 2:
        return [f"a qualified name {_NAME_PART} with an optional DNS subdomain prefix and '/'"]
    errors: list[str] = []
    if len(parts) == 2:
        prefix = parts[0]
        if not prefix:
            errors.append("prefix part must be non-empty")
        else:
            errors += [f"prefix part {e}" for e in dns1123_subdomain_errors(prefix)]
    name = parts[-1]
    if not name:
        return [*errors, "name part must be non-empty"]
    return errors + qualified_name_errors(name)


def annotations_size(annotations: dict[str, str]) -> int:
    """The bytes Kubernetes counts against ANNOTATIONS_MAX: every key and value, in UTF-8."""
    return sum(
        len(k.encode("utf-8", "replace")) + len(v.encode("utf-8", "replace"))
        for k, v in annotations.items()
    )


def job_name(flow: str, entry: str) -> JobName:
    """The vcjob a flow entry becomes: `<flow>-<entry>`, no truncation (reference §2.5)."""
    return JobName(f"{flow}-{entry}")


def pod_name(job: str, task: str, index: int) -> str:
    """The pod of a vcjob task replica: `<job>-<task>-<index>` (volcano-vcjob §3.1)."""
    return f"{job}-{task}-{index}"


def created_by_value(namespace: str, name: str) -> str:
    """The `<ns>.<name>` value of the createdBy labels and annotations."""
    return f"{namespace}.{name}"


def object_key(namespace: str, name: str) -> ObjectKey:
    return ObjectKey(f"{namespace}/{name}")


def split_key(key: ObjectKey) -> tuple[str, str]:
    """(namespace, name) of an `object_key` (a namespace has no `/`)."""
    namespace, _, name = key.partition("/")
    return namespace, name
