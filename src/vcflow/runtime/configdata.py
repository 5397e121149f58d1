"""ConfigMap and Secret data made local when a pod is launched (`kubelet_bridge.pod_request`):
`env[].valueFrom.configMapKeyRef`/`secretKeyRef` become values, `envFrom` becomes `env`
entries (before the container's own, which win), and `configMap`/`secret` volumes become
files under `<pod dir>/volumes/<volume>/` (`volumes` mounts them read-only).

The objects are those the user applied (`api.config`); the svc plugin's ConfigMap
`<job>-svc`, which has no object, is served from its files (a key it lacks drops the
variable, as before). A missing object or key that is not `optional` is a `ConfigError`:
the pod fails with reason `CreateContainerConfigError` and the kubelet's message
(`configmap "x" not found`, `couldn't find key k in ConfigMap ns/x`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Protocol, TypeVar

from vcflow.api import config
from vcflow.api.errors import NotFound
from vcflow.api.meta import Resource
from vcflow.api.vcjob import Container, EnvVar, PodSpec
from vcflow.runtime.launch import LaunchError, PodFile

R = TypeVar("R", bound=Resource)
REASON = "CreateContainerConfigError"
VOLUMES = "volumes"
_ENV_NAME = re.compile(r"^[-._a-zA-Z][-._a-zA-Z0-9]*$")


class ConfigError(LaunchError):
    """A ConfigMap or Secret (or a key of one) the pod needs is missing."""

    reason = REASON


class Objects(Protocol):
    """The one store call this needs (any `store.base.Store` is one)."""

    def get(self, kind: type[R], namespace: str, name: str) -> R: ...


class Resolver:
    """The ConfigMaps and Secrets of one namespace, each read once per pod."""

    def __init__(self, objects: Objects | None, namespace: str, svc: Mapping[str, str]) -> None:
        self.objects, self.namespace = objects, namespace
        self.svc = svc
        self.svc_name: str | None = None
        self._seen: dict[tuple[str, str], dict[str, bytes] | None] = {}

    def data(self, kind: str, name: str, *, optional: bool) -> dict[str, bytes] | None:
        """The object's keys and contents; None if it is missing and `optional`."""
        if kind == "ConfigMap" and name == self.svc_name:
            return {k: v.encode() for k, v in self.svc.items()}
        key = (kind, name)
        if key not in self._seen:
            self._seen[key] = self._read(kind, name)
        found = self._seen[key]
        if found is None and not optional:
            raise ConfigError(f'{kind.lower()} "{name}" not found')
        return found

    def _read(self, kind: str, name: str) -> dict[str, bytes] | None:
        model: type[config.ConfigMap] | type[config.Secret]
        model = config.ConfigMap if kind == "ConfigMap" else config.Secret
        if self.objects is None:
            return None
        try:
            return self.objects.get(model, self.namespace, name).values()
        except NotFound:
            return None
        except ValueError as exc:
            raise ConfigError(f"{kind} {self.namespace}/{name}: {exc}") from None

    def value(self, kind: str, ref: Mapping[str, Any]) -> str | None:
        """A key reference's value; None to drop the variable (optional, or the svc map)."""
        name, key = str(ref.get("name") or ""), str(ref.get("key") or "")
        optional = bool(ref.get("optional")) or (kind == "ConfigMap" and name == self.svc_name)
        data = self.data(kind, name, optional=optional)
        if data is None:
            return None
        if key not in data:
            if optional:
                return None
            raise ConfigError(f"couldn't find key {key} in {kind} {self.namespace}/{name}")
        return data[key].decode(errors="replace")


def resolve_env(container: Container, resolver: Resolver) -> None:
    """Replace the container's config references by values, in place (see the module
    docstring); fieldRefs and plain values are left to `launch`."""
    extra = container.model_extra or {}
    sources = extra.pop("envFrom", None) or []
    out: list[EnvVar] = []
    for source in sources:
        for kind, field in (("ConfigMap", "configMapRef"), ("Secret", "secretRef")):
            ref = source.get(field) if isinstance(source, Mapping) else None
            if isinstance(ref, Mapping):
                data = resolver.data(
                    kind, str(ref.get("name") or ""), optional=bool(ref.get("optional"))
                )
                prefix = str(source.get("prefix") or "")
                for key, value in sorted((data or {}).items()):
                    if _ENV_NAME.match(prefix + key):
                        out.append(EnvVar(name=prefix + key, value=value.decode(errors="replace")))
    for var in container.env or []:
        source = var.value_from or {}
        for kind, field in (("ConfigMap", "configMapKeyRef"), ("Secret", "secretKeyRef")):
            ref = source.get(field)
            if isinstance(ref, Mapping):
                text = resolver.value(kind, ref)
                if text is None:
                    break
                var = var.clone()
                var.value, var.value_from = text, None
                out.append(var)
                break
        else:
            out.append(var)
    if sources or container.env:
        container.env = out


def volume_files(spec: PodSpec, resolver: Resolver) -> dict[str, PodFile]:
    """The files of the pod's configMap and secret volumes, by path in the pod directory."""
    files: dict[str, PodFile] = {}
    for volume in (spec.model_extra or {}).get("volumes") or []:
        if not isinstance(volume, Mapping):
            continue
        for kind, field, name_key in (
            ("ConfigMap", "configMap", "name"),
            ("Secret", "secret", "secretName"),
        ):
            source = volume.get(field)
            if isinstance(source, Mapping):
                files.update(_volume(str(volume.get("name")), kind, source, name_key, resolver))
    return files


def _volume(
    volume: str, kind: str, source: Mapping[str, Any], name_key: str, resolver: Resolver
) -> dict[str, PodFile]:
    name = str(source.get(name_key) or "")
    optional = bool(source.get("optional"))
    data = resolver.data(kind, name, optional=optional) or {}
    mode = source.get("defaultMode")
    default_mode = mode if isinstance(mode, int) else 0o644
    items = source.get("items")
    chosen: list[tuple[str, str, int]] = []
    if isinstance(items, list) and items:
        for item in items:
            key, path = str(item.get("key")), str(item.get("path") or item.get("key"))
            if key not in data:
                if optional:
                    continue
                raise ConfigError(
                    f"configmap references non-existent config key: {key}"
                    if kind == "ConfigMap"
                    else f"references non-existent secret key: {key}"
                )
            item_mode = item.get("mode")
            chosen.append((key, path, item_mode if isinstance(item_mode, int) else default_mode))
    else:
        chosen = [(key, key, default_mode) for key in sorted(data)]
    return {f"{VOLUMES}/{volume}/{path}": PodFile(data[key], m) for key, path, m in chosen}
