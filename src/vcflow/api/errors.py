"""The whole vcflow exception tree, and FieldError, the unit of every validation report.

Callers catch by branch (httpx habit)::

    VcflowError                 exit code 1 at the CLI boundary
    ├── InputError              a file, document or object the user gave is wrong
    │   ├── ParseError          not readable: YAML/JSON syntax, not a mapping, unknown kind
    │   ├── ValidationFailed    read, but admission or schema rejected it (.errors, .warnings)
    │   ├── InvalidName         a name that is not DNS-1123 where it becomes a key or path
    │   └── ArgumentError       a flow argument given (`-p`) that no flow declares: exit 2
    ├── StoreError              the store refused or failed an operation
    │   ├── NotFound
    │   ├── AlreadyExists
    │   ├── Conflict            a write against a stale resourceVersion
    │   ├── Expired             a watch from a resourceVersion no longer kept (HTTP 410)
    │   └── UnreadableStatus    a stored status this vcflow cannot read back
    └── RuntimeFailure          local execution could not do what it was asked

FieldError is data, not an exception: admission returns lists of them and the caller decides
how to report them (CLI line, webhook response, HTTP 422). Its `reason` is the Kubernetes
cause type (`Cause`), so a rule can select by it rather than by the message's words.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from enum import StrEnum

from vcflow.api import printable


@dataclass(frozen=True)
class Origin:
    """Where an object came from: file, 0-based document index, 1-based line if known."""

    source: str = ""
    document: int | None = None
    line: int | None = None

    def __str__(self) -> str:
        if not self.source:
            return ""
        text = self.source
        if self.line is not None:
            text += f":{self.line}"
        if self.document is not None and self.document > 0:
            text += f" (document {self.document + 1})"
        return text


class Cause(StrEnum):
    """What kind of problem a FieldError is: Kubernetes' StatusCause types (metav1.CauseType,
    a 422's `details.causes[].reason`), and UNKNOWN_FIELD for a field no schema knows.
    kube-apiserver has no cause type for that one (it says `unknown field "x"` in a 400's
    message, or a warning): vcflow names it in kube's way, so it survives a Status."""

    INVALID = "FieldValueInvalid"
    NOT_FOUND = "FieldValueNotFound"
    REQUIRED = "FieldValueRequired"
    DUPLICATE = "FieldValueDuplicate"
    NOT_SUPPORTED = "FieldValueNotSupported"
    FORBIDDEN = "FieldValueForbidden"
    TOO_LONG = "FieldValueTooLong"
    TOO_MANY = "FieldValueTooMany"
    TYPE_INVALID = "FieldValueTypeInvalid"
    UNKNOWN_FIELD = "FieldValueUnknown"


#: the kinds of no namespace (`api.clusterscope`), named without one in messages
CLUSTER_KINDS = frozenset({"Queue", "PriorityClass"})


@dataclass(frozen=True)
class FieldError:
    """One problem with one object, in one field; `str()` is the one-line user message.

    Example: ``flow.yaml:14: JobFlow default/demo: spec.flows[2].dependsOn.targets[0]:
    jobflow Flow is not DAG: vertex is not defined: c``.
    """

    message: str
    path: str = ""
    kind: str = ""
    namespace: str = ""
    name: str = ""
    origin: Origin = field(default_factory=Origin)
    hint: str = ""
    warning: bool = False
    #: a `Cause` (any cause type a server sent, read back from a Status)
    reason: str = Cause.INVALID

    def with_object(
        self, *, kind: str, namespace: str, name: str, origin: Origin | None = None
    ) -> FieldError:
        """The same error, attributed to an object (fills only what is still empty)."""
        return replace(
            self,
            kind=self.kind or kind,
            namespace=self.namespace or namespace,
            name=self.name or name,
            origin=origin if origin is not None and not self.origin.source else self.origin,
        )

    def bare(self, *, path: bool = True) -> str:
        """The message without the object it is about, for answers that name the object
        already (an API Status, an AdmissionReview); `path=False` leaves the field out too."""
        return str(
            replace(
                self,
                kind="",
                namespace="",
                name="",
                origin=Origin(),
                path=self.path if path else "",
            )
        )

    def __str__(self) -> str:
        parts: list[str] = []
        where = str(self.origin)
        if where:
            parts.append(where)
        if self.kind:
            obj = self.kind
            if self.name and self.kind in CLUSTER_KINDS:
                obj += f" {self.name}"
            elif self.name:
                obj += f" {self.namespace or 'default'}/{self.name}"
            parts.append(obj)
        if self.path:
            parts.append(self.path)
        text = ": ".join([*parts, self.message])
        if self.hint:
            text += f" ({self.hint})"
        return " ".join(printable.escaped(text, keep="\n").split("\n"))


class VcflowError(Exception):
    """Base of every error vcflow raises on purpose; the CLI maps it to exit code 1."""

    exit_code = 1


class InputError(VcflowError):
    """Something the user gave (file, document, object) is wrong."""


class ParseError(InputError):
    """A file or document could not be read as a Kubernetes object."""

    def __init__(self, message: str, *, origin: Origin | None = None) -> None:
        self.origin = origin or Origin()
        where = str(self.origin)
        super().__init__(f"{where}: {message}" if where else message)


class ValidationFailed(InputError):
    """Schema or admission rejected one or more objects; `.errors` holds every problem, and
    `.warnings` what the same review warned of (a refusal keeps them, as kube-apiserver's
    `Warning` headers beside its Status: the message is the errors only)."""

    def __init__(self, errors: list[FieldError], warnings: Sequence[FieldError] = ()) -> None:
        self.errors = list(errors)
        self.warnings = list(warnings)
        super().__init__("\n".join(str(e) for e in self.errors))


class InvalidName(InputError):
    """A name that must be DNS-1123 (it becomes a key, a label or a path) is not."""


class ArgumentError(InputError):
    """A flow argument given at submit time (`-p NAME=VALUE`, `vcflow.run(arguments=...)`)
    that is malformed or that no flow declares: a usage error, exit code 2."""

    exit_code = 2


class StoreError(VcflowError):
    """The store refused or failed an operation."""


class NotFound(StoreError):
    """The object does not exist."""


class AlreadyExists(StoreError):
    """An object of that kind, namespace and name already exists."""


class Conflict(StoreError):
    """A write carried a resourceVersion older than the stored one."""


class Expired(StoreError):
    """A watch resumed from a resourceVersion whose events were compacted away (HTTP 410
    Gone in Kubernetes): list again, then watch from the store's current resourceVersion."""


class UnreadableStatus(StoreError):
    """A stored status this vcflow cannot read back (a `compactJobStatus` of another
    version, or corrupt): the flow is not reconciled from it, and its sync is retried."""


class RuntimeFailure(VcflowError):
    """Local execution could not do what it was asked."""
