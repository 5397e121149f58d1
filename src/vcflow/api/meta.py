"""The wire-model base class, ObjectMeta and owner references.

Every model keeps fields it does not know (`extra="allow"`) and dumps only what was given
(`to_dict`), so a manifest loaded and dumped again is the same data — pod templates and
fields of newer Volcano versions included.
"""

from __future__ import annotations

import copy
import functools
from typing import Any, Self, TypeVar

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializationInfo,
    SerializerFunctionWrapHandler,
    model_serializer,
)
from pydantic.alias_generators import to_camel
from pydantic_core import to_jsonable_python

from vcflow.api import names

_ALWAYS = frozenset({"api_version", "kind"})
M = TypeVar("M", bound=BaseModel)


@functools.cache
def _layout(model: type[BaseModel]) -> tuple[tuple[str, str, Any, bool], ...]:
    """(attribute, wire name, default, always dumped) of each field, in declaration order,
    per model class: `FieldInfo.get_default` runs `inspect.signature` on the factory at every
    call (pydantic 2.11+), which dominated every dump. The defaults are only compared,
    never handed out."""
    return tuple(
        (
            name,
            field.serialization_alias or field.alias or name,
            field.get_default(call_default_factory=True),
            name in _ALWAYS,
        )
        for name, field in model.model_fields.items()
    )


@functools.cache
def wire_names(model: type[BaseModel]) -> tuple[tuple[str, str], ...]:
    """(attribute, wire name) of each field of `model`, in declaration order."""
    return tuple((name, alias) for name, alias, _, _ in _layout(model))


class WireModel(BaseModel):
    """Base of all resource models: camelCase wire names, strict types, unknown keys kept."""

    model_config = ConfigDict(
        extra="allow",
        alias_generator=to_camel,
        populate_by_name=True,
        strict=True,
        validate_assignment=False,
    )

    @model_serializer(mode="wrap")
    def _given_or_changed(
        self, handler: SerializerFunctionWrapHandler, info: SerializationInfo
    ) -> Any:
        """Dump a field only if it was given, assigned, or differs from its default — so a
        round trip is exact and an in-place edit (`meta.labels["k"] = "v"`) is not lost."""
        data = handler(self)
        if not isinstance(data, dict):
            return data
        given = self.model_fields_set
        for name, alias, default, always in _layout(type(self)):
            if always or name in given:
                continue
            key = alias if info.by_alias else name
            if key in data and getattr(self, name) == default:
                del data[key]
        return data

    def to_dict(self) -> dict[str, Any]:
        """The wire form: camelCase keys, only the fields that were given or set — what
        `model_dump(by_alias=True, mode="json")` gives, built in Python (`_dump_model`):
        cheaper than pydantic calling `_given_or_changed` at every model of the tree, and
        the store and the runtime dump objects at every write."""
        return _dump_model(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Self:
        """Parse wire data; raises pydantic.ValidationError (see `modelerrors.schema_errors`)."""
        return cls.model_validate(data)

    def clone(self) -> Self:
        """A deep copy that keeps which fields were set (so `to_dict` stays exact)."""
        return _copy_model(self)


def _dump_model(model: WireModel) -> dict[str, Any]:
    values = model.__dict__
    given = model.__pydantic_fields_set__
    out: dict[str, Any] = {}
    for name, key, default, always in _layout(type(model)):
        value = values[name]
        if always or name in given or value != default:
            out[key] = _dump_value(value)
    extra = model.__pydantic_extra__
    if extra:
        for key, value in extra.items():
            out[key] = _dump_value(value)
    return out


def _dump_value(value: Any) -> Any:
    """JSON data of a field value; anything but plain JSON types and wire models (enums,
    dates from YAML, non-string keys, other models) is left to pydantic-core."""
    kind = type(value)
    if kind is str or kind is int or kind is bool or value is None:
        return value
    if kind is dict:
        out = {}
        for key, item in value.items():
            if type(key) is not str:
                return to_jsonable_python(value, by_alias=True, inf_nan_mode="null")
            out[key] = _dump_value(item)
        return out
    if kind is list:
        return [_dump_value(item) for item in value]
    if isinstance(value, WireModel):
        return _dump_model(value)
    return to_jsonable_python(value, by_alias=True, inf_nan_mode="null")


_ATOMS = (str, int, float, bool, type(None))
_set_attr = object.__setattr__


def _copy_value(value: Any) -> Any:
    """A deep copy of model data: JSON-like values and models. `copy.deepcopy` (what
    `model_copy(deep=True)` uses) costs several times as much on a pod template, and the
    runtime clones one per pod it builds."""
    kind = type(value)
    if kind in _ATOMS:
        return value
    if kind is dict:
        return {k: _copy_value(v) for k, v in value.items()}
    if kind is list:
        return [_copy_value(v) for v in value]
    if isinstance(value, BaseModel):
        return _copy_model(value)
    return copy.deepcopy(value)


def _copy_model(model: M) -> M:
    cls = type(model)
    new = cls.__new__(cls)
    _set_attr(new, "__dict__", {k: _copy_value(v) for k, v in model.__dict__.items()})
    extra = model.__pydantic_extra__
    _set_attr(new, "__pydantic_extra__", None if extra is None else _copy_value(extra))
    _set_attr(new, "__pydantic_fields_set__", set(model.__pydantic_fields_set__))
    _set_attr(new, "__pydantic_private__", None)
    return new


class OwnerReference(WireModel):
    api_version: str
    kind: str
    name: str
    uid: str = ""
    controller: bool | None = None
    block_owner_deletion: bool | None = None


class ObjectMeta(WireModel):
    """Kubernetes ObjectMeta, the fields vcflow reads or maintains."""

    name: str = ""
    generate_name: str | None = None
    namespace: str = names.DEFAULT_NAMESPACE
    labels: dict[str, str] = Field(default_factory=dict)
    annotations: dict[str, str] = Field(default_factory=dict)
    uid: str = ""
    resource_version: str = ""
    generation: int = 0
    creation_timestamp: str | None = None
    deletion_timestamp: str | None = None
    owner_references: list[OwnerReference] = Field(default_factory=list)
    finalizers: list[str] = Field(default_factory=list)

    def controller_ref(self) -> OwnerReference | None:
        """The owner reference with `controller: true`, if any."""
        for ref in self.owner_references:
            if ref.controller:
                return ref
        return None


class Resource(WireModel):
    """Common top of every stored object."""

    api_version: str
    kind: str
    metadata: ObjectMeta = Field(default_factory=ObjectMeta)

    @property
    def name(self) -> str:
        return self.metadata.name

    @property
    def namespace(self) -> str:
        return self.metadata.namespace

    @property
    def key(self) -> names.ObjectKey:
        return names.object_key(self.metadata.namespace, self.metadata.name)


def controller_reference(owner: Resource, *, block_owner_deletion: bool = True) -> OwnerReference:
    """The controller ownerReference a dependent of `owner` carries (garbage collection
    follows it: deleting `owner` removes the dependent)."""
    return OwnerReference(
        api_version=owner.api_version,
        kind=owner.kind,
        name=owner.name,
        uid=owner.metadata.uid,
        controller=True,
        block_owner_deletion=block_owner_deletion or None,
    )
