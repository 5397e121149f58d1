"""Admission's warnings as the texts a Kubernetes answer carries (`Warning` headers, an
AdmissionReview's `warnings`), both ways: `said` by the vcflow server and the webhook,
`heard` by KubeStore, which makes FieldErrors of them again so the CLI reports a remote
write's warnings as an embedded one's. Pure.
"""

from __future__ import annotations

import re

from vcflow.api.errors import Cause, FieldError
from vcflow.kubeapi.fieldvalidation import UNKNOWN_FIELD

_PATH = re.compile(r"^[A-Za-z][\w.\-]*(\[[^\]]*\][\w.\-]*)*$")


def said(warning: FieldError) -> str:
    """A warning's text: without the object (the answer is about it), with its field unless
    the words quote it already (`unknown field "spec.x"`)."""
    return warning.bare(path=f'"{warning.path}"' not in warning.message)


def heard(text: str, *, kind: str, namespace: str, name: str) -> FieldError:
    """A warning's text as the FieldError admission made of it: the object a server names
    in front (`Kind ns/name: `) and a leading field path are taken apart again, so the CLI
    can point at the manifest line as it does embedded; an unknown field's words (which
    kube-apiserver's warnings share) give it that reason, as fieldValidation needs."""
    prefix = f"{kind} {namespace}/{name}: "
    rest = text[len(prefix) :] if text.startswith(prefix) else text
    reason = Cause.UNKNOWN_FIELD if rest.startswith(UNKNOWN_FIELD) else Cause.INVALID
    head, sep, tail = rest.partition(": ")
    if sep and _PATH.match(head):
        return FieldError(tail, head, kind, namespace, name, warning=True, reason=reason)
    return FieldError(rest, "", kind, namespace, name, warning=True, reason=reason)
