"""The core `v1 ConfigMap` and `v1 Secret`: data a user applies for pods to read, through
`configMap`/`secret` volumes, `env.valueFrom.configMapKeyRef`/`secretKeyRef` and `envFrom`
(`runtime.configdata` resolves them when a pod is launched).

As in Kubernetes: a ConfigMap has `data` (text) and `binaryData` (base64); a Secret has
`data` (base64) and `type` (`Opaque` by default), and accepts `stringData` (text) on write,
merged into `data` (encoded) by the store, `stringData` winning, and never stored itself.
"""

from __future__ import annotations

import base64
import binascii
from typing import Literal

from pydantic import Field

from vcflow.api.meta import Resource

OPAQUE = "Opaque"


class ConfigMap(Resource):
    api_version: Literal["v1"] = "v1"
    kind: Literal["ConfigMap"] = "ConfigMap"
    data: dict[str, str] | None = None
    binary_data: dict[str, str] | None = None
    immutable: bool | None = None

    def values(self) -> dict[str, bytes]:
        """Every key's content (binaryData decoded); ValueError on bad base64."""
        out = {k: v.encode() for k, v in (self.data or {}).items()}
        for key, text in (self.binary_data or {}).items():
            out[key] = decode(text, f"binaryData[{key}]")
        return out


class Secret(Resource):
    api_version: Literal["v1"] = "v1"
    kind: Literal["Secret"] = "Secret"
    type: str | None = None
    data: dict[str, str] | None = None
    string_data: dict[str, str] | None = Field(default=None)
    immutable: bool | None = None

    def values(self) -> dict[str, bytes]:
        """Every key's content: `data` decoded, `stringData` over it; ValueError on bad
        base64."""
        out = {k: decode(v, f"data[{k}]") for k, v in (self.data or {}).items()}
        out.update({k: v.encode() for k, v in (self.string_data or {}).items()})
        return out


def decode(text: str, where: str) -> bytes:
    try:
        return base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        raise ValueError(f"{where}: illegal base64 data") from None


def encode(data: bytes) -> str:
    return base64.b64encode(data).decode()


def merge_string_data(secret: Secret) -> bool:
    """The API server's write of a Secret: `stringData` encoded into `data` and dropped;
    False when there was none (nothing changed)."""
    if secret.string_data is None:
        return False
    data = dict(secret.data or {})
    data.update({k: encode(v.encode()) for k, v in secret.string_data.items()})
    secret.data = data
    secret.string_data = None
    secret.model_fields_set.discard("string_data")
    if secret.type is None:
        secret.type = OPAQUE
    return True
