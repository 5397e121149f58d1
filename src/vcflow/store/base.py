"""The Store protocol and the vocabulary every backend shares: watch events, apply outcomes,
label selectors and the registry of kinds a store holds.

Controllers, the runtime, the CLI and the server talk to a `Store`; `memory.MemoryStore`
(the test fake) and `sqlite.SqliteStore` (the embedded default) implement it, and one
contract suite (`tests/store/`) holds them to the same behaviour. Pure: no I/O here.
"""

from __future__ import annotations

import builtins
import json
import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import Any, Generic, Protocol, TypeVar, runtime_checkable

import pydantic

from vcflow.api import config, loading, modelerrors, names, scheduling
from vcflow.api.command import Command
from vcflow.api.errors import Expired as Expired  # (its home; the store's callers import it here)
from vcflow.api.errors import FieldError, InputError, StoreError, ValidationFailed
from vcflow.api.event import Event
from vcflow.api.jobtemplate import JobTemplate
from vcflow.api.lease import Lease
from vcflow.api.meta import Resource
from vcflow.api.pod import Pod
from vcflow.api.vcjob import spec_defaults_applied
from vcflow.kubeapi.fieldvalidation import Validation

R = TypeVar("R", bound=Resource)


class InvalidSelector(InputError):
    """A label selector that does not parse."""


class UnknownKind(InputError):
    """An object whose (apiVersion, kind) the store was not told about (`register_kind`)."""


class EventType(StrEnum):
    ADDED = "ADDED"
    MODIFIED = "MODIFIED"
    DELETED = "DELETED"


class WatchEvent:
    """One committed change. `object` is the state after the change (for DELETED: the last
    state, carrying the resourceVersion of the deletion); `resource_version` is that
    write's store-wide integer resourceVersion, the position to resume a watch from.

    `object` is parsed from the stored JSON when first read (then kept): a watcher that
    skips an event by its `model`, `namespace`, `name` and `resource_version` — its own
    write, say — does not pay for the parse. Treat `object` as read-only: every consumer
    of this event gets the same one."""

    __slots__ = ("_data", "_object", "model", "name", "namespace", "resource_version", "type")

    def __init__(
        self,
        type: EventType,
        model: type[Resource],
        namespace: str,
        name: str,
        resource_version: int,
        data: str,
    ) -> None:
        self.type, self.model = type, model
        self.namespace, self.name = namespace, name
        self.resource_version = resource_version
        self._data = data
        self._object: Resource | None = None

    @property
    def object(self) -> Resource:
        if self._object is None:
            self._object = stored_object(self.model, self._data)
        return self._object

    @property
    def raw(self) -> str:
        """The object as stored (JSON), for a watcher that needs one field of a big one."""
        return self._data

    @property
    def key(self) -> names.ObjectKey:
        return names.object_key(self.namespace, self.name)

    def __repr__(self) -> str:
        return f"WatchEvent({self.type}, {self.model.__name__} {self.key}, {self.resource_version})"


def stored_object(model: type[Resource], data: str) -> Resource:
    """The model of a stored object's JSON; StoreError, one line naming the object and its
    first bad field, for one this vcflow cannot read (a store damaged or edited by hand, or
    written by another vcflow): pydantic's own text was an `internal error`."""
    try:
        return model.model_validate_json(data)
    except pydantic.ValidationError as exc:
        try:
            loaded = json.loads(data)
        except ValueError:
            loaded = None
        kind = model.model_fields["kind"].default or model.__name__
        if not isinstance(loaded, dict):
            raise StoreError(
                f"a stored {kind} is not a JSON object: the store is damaged"
            ) from None
        meta: dict[str, Any] = loaded.get("metadata") or {}
        namespace = meta.get("namespace") if isinstance(meta, dict) else None
        name = meta.get("name") if isinstance(meta, dict) else None
        where = f"{kind} {namespace}/{name}" if namespace else f"{kind} {name}"
        field, _, message = modelerrors.schema_errors(exc, loaded)[0]
        raise StoreError(
            f"stored {where} cannot be read: {field}: {message} (the store was changed by "
            "another program or vcflow version)"
        ) from None


class Outcome(StrEnum):
    """What `apply` did to one object, in kubectl's words."""

    CREATED = "created"
    CONFIGURED = "configured"
    UNCHANGED = "unchanged"


@dataclass(frozen=True)
class ApplyResult:
    object: Resource
    outcome: Outcome
    warnings: tuple[FieldError, ...] = ()


# --- label selectors ---------------------------------------------------------------------

_OPS = ("=", "!=", "in", "notin", "exists", "!")
_SET_RE = re.compile(r"^\s*(!?)\s*([^\s=!(),]+)\s*(?:(notin|in)\s*\(([^()]*)\))?\s*$")
_EQ_RE = re.compile(r"^\s*([^\s=!(),]+)\s*(==|=|!=)\s*([^\s=!(),]*)\s*$")


@dataclass(frozen=True)
class Requirement:
    """One term of a selector: `key=v`, `key!=v`, `key in (a,b)`, `key notin (a)`, `key`,
    `!key`. Kubernetes semantics: `!=` and `notin` also match objects without the key."""

    key: str
    op: str
    values: frozenset[str] = frozenset()

    def matches(self, labels: Mapping[str, str]) -> bool:
        value = labels.get(self.key)
        if self.op in ("=", "in"):
            return value is not None and value in self.values
        if self.op in ("!=", "notin"):
            return value is None or value not in self.values
        if self.op == "exists":
            return value is not None
        return value is None


@dataclass(frozen=True)
class Selector:
    """A conjunction of requirements; the empty selector matches everything."""

    requirements: tuple[Requirement, ...] = ()

    @classmethod
    def parse(cls, text: str) -> Selector:
        """`a=b,c!=d,e,!f,g in (x,y)` → Selector; raises InvalidSelector naming the term."""
        reqs = [_parse_term(term) for term in _split_terms(text) if term.strip()]
        return cls(tuple(reqs))

    @classmethod
    def coerce(cls, value: str | Mapping[str, str] | Selector | None) -> Selector:
        """A selector from text, an equality map (`{"a": "b"}`), a Selector or None."""
        if value is None:
            return cls()
        if isinstance(value, Selector):
            return value
        if isinstance(value, str):
            return cls.parse(value)
        return cls(tuple(Requirement(k, "=", frozenset({v})) for k, v in value.items()))

    def matches(self, labels: Mapping[str, str]) -> bool:
        return all(req.matches(labels) for req in self.requirements)

    def index_hint(self) -> tuple[str, str] | None:
        """A `key=value` pair every match must carry, for an index lookup; None if none."""
        for req in self.requirements:
            if req.op in ("=", "in") and len(req.values) == 1:
                return req.key, next(iter(req.values))
        return None

    def __str__(self) -> str:
        return ",".join(_format(req) for req in self.requirements)


def _split_terms(text: str) -> Iterator[str]:
    """Split on commas outside parentheses."""
    depth, start = 0, 0
    for i, char in enumerate(text):
        if char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
        elif char == "," and depth == 0:
            yield text[start:i]
            start = i + 1
    yield text[start:]


def _parse_term(term: str) -> Requirement:
    match = _EQ_RE.match(term)
    if match:
        key, op, value = match.groups()
        return Requirement(key, "!=" if op == "!=" else "=", frozenset({value}))
    match = _SET_RE.match(term)
    if match:
        bang, key, op, values = match.groups()
        if op is None:
            return Requirement(key, "!" if bang else "exists")
        if not bang:
            items = frozenset(v.strip() for v in values.split(",") if v.strip())
            return Requirement(key, op, items)
    raise InvalidSelector(f'invalid label selector term "{term.strip()}"')


def _format(req: Requirement) -> str:
    if req.op in ("=", "!="):
        return f"{req.key}{req.op}{next(iter(req.values))}"
    if req.op in ("in", "notin"):
        return f"{req.key} {req.op} ({','.join(sorted(req.values))})"
    return req.key if req.op == "exists" else f"!{req.key}"


SelectorLike = str | Mapping[str, str] | Selector | None


# --- kinds -------------------------------------------------------------------------------

#: Fills defaults in a model in place; returning False says it changed nothing (the store
#: then keeps the data as given instead of dumping the model again). Status writes do not
#: run it (they validate the status alone when they can), so it must leave status alone.
Defaulter = Callable[[Resource], bool | None]


@dataclass(frozen=True)
class KindInfo:
    """A kind the store holds: its model, its id (`<apiVersion>/<kind>`, the storage key)
    and an optional defaulter run on create/update/apply (the API server's CRD defaulting)."""

    model: type[Resource]
    api_version: str
    kind: str
    defaulter: Defaulter | None = None

    @property
    def id(self) -> str:
        return f"{self.api_version}/{self.kind}"

    def describe(self, namespace: str, name: str) -> str:
        """`Kind ns/name`; `Kind name` for a cluster-scoped object (stored under `""`)."""
        return f"{self.kind} {namespace}/{name}" if namespace else f"{self.kind} {name}"


@dataclass
class KindRegistry:
    """(apiVersion, kind) → KindInfo. Each store has its own copy; `register` adds a kind
    (e.g. core `v1 Pod`) so the store stays generic."""

    _by_pair: dict[tuple[str, str], KindInfo] = field(default_factory=dict)
    _by_model: dict[type[Resource], KindInfo] = field(default_factory=dict)

    def register(self, model: type[Resource], *, defaulter: Defaulter | None = None) -> KindInfo:
        """Add a model whose `apiVersion` and `kind` fields have literal defaults."""
        api_version = model.model_fields["api_version"].default
        kind = model.model_fields["kind"].default
        if not isinstance(api_version, str) or not isinstance(kind, str):
            raise TypeError(f"{model.__name__}: apiVersion and kind need string defaults")
        info = KindInfo(model, api_version, kind, defaulter)
        self._by_pair[(api_version, kind)] = info
        self._by_model[model] = info
        return info

    def of_model(self, model: type[Resource]) -> KindInfo:
        info = self._by_model.get(model)
        if info is None:
            raise UnknownKind(f"the store holds no kind {model.__name__}; register_kind it first")
        return info

    def of(self, obj: Resource) -> KindInfo:
        """The kind of an object, by its apiVersion and kind (not its Python class)."""
        info = self._by_pair.get((obj.api_version, obj.kind))
        if info is None:
            known = ", ".join(f"{k} ({v})" for v, k in self._by_pair)
            raise UnknownKind(
                f'no kind "{obj.kind}" in version "{obj.api_version}"; the store holds {known}'
            )
        return info

    def by_id(self, kind_id: str) -> KindInfo:
        """The kind of a stored row. A kind this registry lacks (written by a process that
        registered more kinds) reads as a plain `Resource`, every field kept."""
        api_version, _, kind = kind_id.rpartition("/")
        found = self._by_pair.get((api_version, kind))
        return found if found is not None else KindInfo(Resource, api_version, kind)

    def all(self) -> builtins.list[KindInfo]:
        return builtins.list(self._by_pair.values())

    def copy(self) -> KindRegistry:
        return KindRegistry(dict(self._by_pair), dict(self._by_model))


def _template_defaults(obj: Resource) -> bool:
    """CRD defaulting of a JobTemplate's spec (conformance README, controller model 7)."""
    if not isinstance(obj, JobTemplate) or obj.spec is None:
        return False
    if obj.spec.queue is not None and obj.spec.max_retry is not None:
        return False  # already defaulted (every stored template): nothing to copy
    obj.spec = spec_defaults_applied(obj.spec)
    return True


def _secret_defaults(obj: Resource) -> bool:
    """The API server's Secret write: `stringData` into `data`, `type` Opaque."""
    if not isinstance(obj, config.Secret):
        return False
    changed = config.merge_string_data(obj)
    if obj.type is None:
        obj.type = config.OPAQUE
        changed = True
    return changed


_DEFAULTERS: dict[type[Resource], Defaulter] = {
    JobTemplate: _template_defaults,
    config.Secret: _secret_defaults,
    scheduling.Queue: scheduling.defaults,
    scheduling.PriorityClass: scheduling.defaults,
}


def default_kinds() -> KindRegistry:
    """The kinds of `loading.MODELS`, with JobTemplate's CRD defaults, a Secret's
    `stringData` merge and the Queue and PriorityClass defaults."""
    registry = KindRegistry()
    for model in loading.MODELS.values():
        registry.register(model, defaulter=_DEFAULTERS.get(model))
    for model in (Event, Pod, Command):
        registry.register(model)
    registry.register(Lease)  # (the operator's leader election)
    return registry


def check_unique(objects: Sequence[Resource], infos: Sequence[KindInfo]) -> None:
    """ValidationFailed naming each object a batch (`apply`) holds twice."""
    seen: set[tuple[str, str, str]] = set()
    errors = []
    for obj, info in zip(objects, infos, strict=True):
        key = (info.id, obj.namespace or names.DEFAULT_NAMESPACE, obj.name)
        if obj.name and key in seen:
            errors.append(
                FieldError(
                    "the batch holds this object twice",
                    "metadata.name",
                    info.kind,
                    obj.namespace,
                    obj.name,
                )
            )
        seen.add(key)
    if errors:
        raise ValidationFailed(errors)


# --- where a watcher stands --------------------------------------------------------------


@dataclass(frozen=True)
class Cursor:
    """Where a watcher stands in a `Feed`: handed out by `poll_events` with the events, and
    passed back to the next `poll_events` and to `wait`. Callers make one only to start —
    `Cursor(rv)`: after resourceVersion `rv` (`Cursor.now(store)`: after the last write) —
    and read nothing of it but `rv`, how far it is store-wide.

    Every kind is read up to `rv` but the kinds `behind`, each up to its own position: a
    store over per-kind watch streams (`KubeStore`) has a kind's events only as far as its
    stream has come, so a kind whose stream lags another's resumes from where it was, and
    loses no event and repeats none however many polls pass. An embedded store has one
    counter: its cursors have no kind behind. A cursor follows the kinds it was polled
    for: a kind it was not polled for is at `rv` (its events before it are not read)."""

    rv: int = 0
    behind: tuple[tuple[type[Resource], int], ...] = ()

    @classmethod
    def now(cls, store: Feed) -> Cursor:
        """After the store's last write: the events from now on."""
        return cls(store.resource_version())

    @classmethod
    def per_kind(cls, rv: int, positions: Mapping[type[Resource], int]) -> Cursor:
        """Every kind at `rv` but those of `positions`, each at its own (if behind `rv`)."""
        behind = sorted(
            ((kind, at) for kind, at in positions.items() if at < rv),
            key=lambda pair: (pair[0].__module__, pair[0].__qualname__),
        )
        return cls(rv, tuple(behind))

    def position(self, kind: type[Resource]) -> int:
        """The resourceVersion after which `kind`'s next event is read."""
        for model, at in self.behind:
            if model is kind:
                return at
        return self.rv

    def past(self, found: Sequence[WatchEvent], upto: int = 0) -> Cursor:
        """This cursor after reading `found` (its events after it, in one resourceVersion
        order across kinds: a store-wide counter's) and, with `upto` (a resourceVersion
        taken before they were read, so that a later write is in `found` or after it),
        past every kind's events up to `upto`: the one resume rule of a counter."""
        upto = max(upto, found[-1].resource_version if found else 0)
        rv = max(self.rv, upto)
        if rv == self.rv and not self.behind:
            return self
        return Cursor.per_kind(rv, {kind: max(at, upto) for kind, at in self.behind})

    def own(self, rv: int) -> Cursor:
        """Past the watcher's own write at `rv` when it directly follows the cursor (an
        embedded store's counter): its event would only be read back to be skipped."""
        return replace(self, rv=rv) if rv == self.rv + 1 else self

    def __repr__(self) -> str:
        kinds = "".join(f", {kind.__name__}={at}" for kind, at in self.behind)
        return f"Cursor({self.rv}{kinds})"


# --- the protocol ------------------------------------------------------------------------

#: fieldValidation: what a reviewed write does with unknown fields (kube's query parameter)


@dataclass(frozen=True)
class Written(Generic[R]):
    """A reviewed write's answer: the object as stored and admission's warnings, from the
    write's one review (the server sends them back as `Warning` headers)."""

    object: R
    warnings: tuple[FieldError, ...] = ()


class Reader(Protocol):
    """Reads of the stored objects. Objects come out as fresh models the caller owns."""

    def get(self, kind: type[R], namespace: str, name: str) -> R:
        """A fresh copy of one object; NotFound if absent."""

    def list(
        self, kind: type[R], namespace: str | None = None, label_selector: SelectorLike = None
    ) -> builtins.list[R]:
        """Objects sorted by (namespace, name); all namespaces when `namespace` is None."""

    def names(
        self, kind: type[Resource], namespace: str, label_selector: SelectorLike = None
    ) -> builtins.list[str]:
        """The names of the objects `list` would return (one namespace), unparsed."""

    def phase(self, kind: type[Resource], namespace: str, name: str) -> str:
        """`status.state.phase` of one object (a JobFlow's, a vcjob's), `""` when it has
        none, without parsing the whole object; NotFound if absent. A watcher that needs
        only the phase of a big object (a flow's status lists every job) reads this."""


class Writer(Protocol):
    """Writes, each reviewed by admission once (but status writes and bindings). A write
    whose non-empty `metadata.resourceVersion` is not the stored one raises Conflict."""

    def create(self, obj: R, *, admit: bool = True) -> R:
        """Store a new object (AlreadyExists if taken); admission's errors only (the
        unknown-field walk skipped) unless `admit=False`."""

    def update(self, obj: R, *, admit: bool = True) -> R:
        """Replace everything but status and server-owned metadata; Conflict if stale."""

    def create_reviewed(self, obj: R, *, validation: Validation = Validation.WARN) -> Written[R]:
        """`create` with admission's whole review, its warnings returned (`validation`
        decides what unknown fields are: `admit.judge`): a client's write (the server's)."""

    def update_reviewed(self, obj: R, *, validation: Validation = Validation.WARN) -> Written[R]:
        """`update` as `create_reviewed` is `create`."""

    def update_status(self, obj: R) -> R:
        """Replace only the status (the status subresource); no admission."""

    def update_status_data(
        self,
        kind: type[R],
        namespace: str,
        name: str,
        status: Mapping[str, Any] | None,
        *,
        resource_version: str = "",
        uid: str = "",
        base: R | None = None,
    ) -> R:
        """`update_status` with the status in wire form (validated all the same); given the
        caller's unchanged copy as `base`, only the status is validated."""

    def bind(
        self, namespace: str, name: str, node_name: str, *, uid: str = "", base: Pod | None = None
    ) -> Pod:
        """Set only a pod's `spec.nodeName` (the `pods/binding` subresource): no admission,
        no generation bump; Conflict if being deleted or bound to another node."""

    def delete(
        self,
        kind: type[R],
        namespace: str,
        name: str,
        *,
        force: bool = False,
        resource_version: str = "",
    ) -> R:
        """Delete (mark, with finalizers) and collect dependents; DELETE review unless
        `force`. Returns the last state."""

    def apply(self, objects: Sequence[Resource]) -> builtins.list[ApplyResult]:
        """Create-or-update a batch, all reviewed first, all or nothing."""


class Feed(Protocol):
    """The committed changes, in resourceVersion order, for watchers."""

    def resource_version(self) -> int:
        """The resourceVersion of the last committed write."""

    def events_since(
        self,
        since_rv: int,
        *,
        kinds: Iterable[type[Resource]] | None = None,
        namespace: str | None = None,
        limit: int | None = None,
    ) -> builtins.list[WatchEvent]:
        """Events after `since_rv`, non-blocking; Expired when it cannot resume there."""

    def poll_events(
        self, cursor: Cursor, kinds: Iterable[type[Resource]]
    ) -> tuple[builtins.list[WatchEvent], Cursor]:
        """The events of `kinds` after `cursor`, by resourceVersion, and the cursor to poll
        from next: past the other kinds' events too, so a watcher of few kinds does not
        scan the others again. Raises Expired as `events_since` does."""

    def wait(self, cursor: Cursor, timeout: float) -> bool:
        """Block until a write after `cursor` commits (True) or `timeout` passes."""

    def watch(
        self,
        kinds: Iterable[type[Resource]] | None = None,
        *,
        namespace: str | None = None,
        since_rv: int | None = None,
        timeout: float | None = None,
    ) -> Iterator[WatchEvent]:
        """Events from `since_rv` (default: now), blocking; ends after `timeout` idle."""


class Store(Reader, Writer, Feed, Protocol):
    """What controllers, the runtime, the CLI and the server need from a store: the
    embedded ones (`engine.StoreEngine`) and the Kubernetes API's (`KubeStore`).

    Objects go in and come out as models; the store keeps its own copies and returns fresh
    ones. resourceVersions are increasing integers (strings in metadata, ints in the watch
    API). See `engine.StoreEngine` for the exact write semantics.
    """

    kinds: KindRegistry

    def register_kind(self, model: type[Resource], *, defaulter: Defaulter | None = None) -> None:
        """Let the store hold another kind (e.g. core `v1 Pod`)."""

    def close(self) -> None:
        """Release the store's resources."""


@runtime_checkable
class Transactional(Protocol):
    """A store that groups writes into one commit: the embedded ones only (the Kubernetes
    API has no multi-object transaction)."""

    def transaction(self) -> AbstractContextManager[None]:
        """Group writes into one commit (nested: savepoints); an exception undoes them."""


class EmbeddedStore(Store, Transactional, Protocol):
    """A store in this process (memory, SQLite): a `Store` with transactions, as the
    server's dryRun (a write rolled back) needs."""


def batched(store: object) -> AbstractContextManager[None]:
    """One transaction around a burst of writes where the store has them (one commit
    instead of many); nothing where it has none (`KubeStore`: each write commits alone)."""
    if isinstance(store, Transactional):
        return store.transaction()
    return nullcontext()
