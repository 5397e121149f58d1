"""The write semantics every backend shares, on top of a few storage primitives.

`StoreEngine` (writes) on `backend.Backend` (transactions, reads, watches) implements the
`base.EmbeddedStore` protocol once; `memory.MemoryStore` and `sqlite.SqliteStore` only supply rows,
indexes, an event log and transactions. So both pass the same contract suite by
construction, and the rules live in one place:

- create: sets uid (uuid4), creationTimestamp (injected Clock), generation 1 and the
  namespace (`default` when empty); a missing name comes from `generateName`; server-owned
  metadata the client sent is ignored. As for a Kubernetes CRD with a status subresource,
  the status a client gives is dropped (`status_dropped_on_create`; the main path of
  `apply` too); an internal create (`admit=False`: the runtime's pods, the control
  plane's own objects) keeps it.
- update: replaces everything but status and server-owned metadata; generation grows only
  when the content (`spec`) changes; an update that changes nothing writes nothing.
- admission: each create, update and delete is reviewed once (`admit`); `create` and
  `update` raise its errors, `create_reviewed` and `update_reviewed` (a client's write, the
  server's) also walk for unknown fields and return the warnings, fieldValidation applied.
- update_status: replaces only status; never reviewed by admission (Kubernetes' webhooks do
  not see status-subresource writes either), nor defaulted (a kind's defaulter fills content).
  Given the caller's copy of the object (`base`), only the status is validated.
- bind: sets only a pod's `spec.nodeName`, as the `pods/binding` subresource: no admission,
  no generation bump; Conflict if the pod is being deleted or bound to another node.
- preconditions: a non-empty `metadata.resourceVersion` (or `uid`) that is not the stored
  one raises Conflict; an empty one writes unconditionally.
- delete: with finalizers, only sets deletionTimestamp; the object goes when an update
  empties its finalizers. A removed object's dependents (objects whose ownerReferences
  name its uid, and that have no other owner still present) are deleted in the same
  transaction, cascading — Kubernetes' background garbage collection, done synchronously.
- every write allocates the next store-wide resourceVersion and appends one watch event.
- apply: create-or-update of a batch, all reviewed (against the store plus the batch)
  before the first write, in one transaction; `unchanged` objects are not written.
- size: an object a reviewed write (create, update, apply) would store larger than
  `bounds.MAX_OBJECT_BYTES` as JSON is refused (ValidationFailed), as the Kubernetes API
  refuses one; so is a status write (etcd refuses every request that large, a status
  subresource write too: a controller must keep its statuses smaller, docs/status-size.md).
  Binding and internal writes are not bounded.
"""

from __future__ import annotations

import builtins
import copy
import functools
import secrets
import string
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, cast

import pydantic

from vcflow.api import bounds, clusterscope, modelerrors, names
from vcflow.api.clock import rfc3339
from vcflow.api.errors import AlreadyExists, Conflict, FieldError, NotFound, ValidationFailed
from vcflow.api.meta import Resource
from vcflow.api.pod import Pod, PodSpec
from vcflow.kubeapi import resources
from vcflow.kubeapi.fieldvalidation import Validation
from vcflow.store import admit, wire
from vcflow.store.backend import Backend, parse
from vcflow.store.base import (
    ApplyResult,
    EventType,
    KindInfo,
    Outcome,
    R,
    Written,
    check_unique,
)
from vcflow.store.wire import Data, Row

Operation = admit.Operation


class StoreEngine(Backend):
    """The Store's writes; backends subclass it and implement `Backend`'s primitives."""

    # --- writes -------------------------------------------------------------------------

    def create(self, obj: R, *, admit: bool = True) -> R:
        """Store a new object; AlreadyExists if the name is taken; admission's errors (the
        unknown-field walk skipped: every vcjob a flow creates passes here) unless
        `admit=False` (internal writes that need no webhook)."""
        return self._create_object(obj, _ERRORS if admit else None).object

    def create_reviewed(self, obj: R, *, validation: Validation = Validation.WARN) -> Written[R]:
        """`create` with admission's whole review, its warnings returned (a client's)."""
        return self._create_object(obj, validation)

    def _create_object(self, obj: R, validation: str | None) -> Written[R]:
        info = self.kinds.of(obj)
        with self._atomic():
            model, data = self._prepare_create(info, obj, keep_status=validation is None)
            warnings = _reviewed(self, model, Operation.CREATE, None, validation)
            bounded = validation is not None
            self._write(info, data, None, EventType.ADDED, bounded=bounded)  # AlreadyExists
            model.metadata.resource_version = data["metadata"]["resourceVersion"]
            return Written(cast(R, model), warnings)

    def update(self, obj: R, *, admit: bool = True) -> R:
        """Replace spec, labels, annotations, ownerReferences, finalizers (not status)."""
        return self._update_object(obj, _ERRORS if admit else None).object

    def update_reviewed(self, obj: R, *, validation: Validation = Validation.WARN) -> Written[R]:
        """`update` with admission's whole review, its warnings returned (a client's)."""
        return self._update_object(obj, validation)

    def _update_object(self, obj: R, validation: str | None) -> Written[R]:
        info = self.kinds.of(obj)
        with self._atomic():
            row = self._require(info, obj.namespace, obj.name)
            _check_preconditions(info, row, obj.metadata.resource_version, obj.metadata.uid)
            old = wire.loads(row.data)
            model, data = _validated(info, wire.merged_update(old, wire.incoming(obj)))
            _bump_generation(old, data, model)
            stored = parse(info, row.data) if validation is not None else None
            warnings = _reviewed(self, model, Operation.UPDATE, stored, validation)
            bounded = validation is not None
            written = self._replace(info, row, old, model, data, bounded=bounded)
            return Written(cast(R, written), warnings)

    def update_status(self, obj: R) -> R:
        """Replace only the status (the status subresource); no admission.

        The rest of `obj` is ignored, so it is not taken as the `base` of
        `update_status_data`: proving it is the stored object would dump it whole, which
        costs more than validating the stored one."""
        info = self.kinds.of(obj)
        meta = obj.metadata
        status = wire.status_of(obj)  # the status only: a big spec is not dumped
        written = self._write_status(
            info, obj.namespace, obj.name, status, meta.resource_version, meta.uid
        )
        return cast(R, written)

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
        """`update_status` with the status in wire form, for a controller that renders a big
        status as data (no model of it to build and dump); same preconditions.

        `base` is the caller's copy of the object as the store returned it (its status
        aside): when it is still the stored version (same resourceVersion and uid), only the
        status is validated and the object returned is `base` with the new status and
        metadata, sharing the rest with it — a pod or vcjob's spec is not validated again
        at each status write. Otherwise the whole object is, as without `base`. `base` is
        no precondition: `resource_version` and `uid` are."""
        info = self.kinds.of_model(kind)
        data = {"status": None if status is None else dict(status)}
        written = self._write_status(info, namespace, name, data, resource_version, uid, base)
        return cast(R, written)

    def _write_status(
        self,
        info: KindInfo,
        namespace: str,
        name: str,
        new: Data,
        resource_version: str,
        uid: str,
        base: Resource | None = None,
    ) -> Resource:
        with self._atomic():
            row = self._require(info, namespace, name)
            _check_preconditions(info, row, resource_version, uid)
            old = wire.loads(row.data)
            data = wire.merged_status(old, new)
            model = _with_status(info, base, row, new) or _model_of(info, data)
            return self._replace(info, row, old, model, data, bounded=True)

    def bind(
        self, namespace: str, name: str, node_name: str, *, uid: str = "", base: Pod | None = None
    ) -> Pod:
        """Place a pod on a node: set its `spec.nodeName`, nothing else, as Kubernetes'
        `pods/binding` subresource — the scheduler's write, not a user's spec change, so no
        admission and no generation bump. NotFound if absent; Conflict if `uid` is not the
        stored pod's, if it is being deleted or already bound to another node (binding it
        again to its node writes nothing). `base` as for `update_status_data`."""
        info = self.kinds.of_model(Pod)
        with self._atomic():
            row = self._require(info, namespace, name)
            _check_preconditions(info, row, "", uid)
            old = wire.loads(row.data)
            _check_bindable(info, old, node_name)
            data = dict(old)
            data["spec"] = {**(old.get("spec") or {}), "nodeName": node_name}
            model = _bound(info, base, row, node_name) or _model_of(info, data)
            return cast(Pod, self._replace(info, row, old, model, data))

    def delete(
        self,
        kind: type[R],
        namespace: str,
        name: str,
        *,
        force: bool = False,
        resource_version: str = "",
    ) -> R:
        """Delete (or, with finalizers, mark deleted) and garbage-collect dependents.

        Runs the DELETE review (compatibility row 11) unless `force`. Returns the last state.
        """
        info = self.kinds.of_model(kind)
        namespace = clusterscope.scoped(kind, namespace)
        with self._atomic():
            row = self._require(info, namespace, name)
            if resource_version and resource_version != str(row.rv):
                raise Conflict(_conflict_message(info, row, resource_version))
            if not force:
                _reviewed(self, parse(info, row.data), Operation.DELETE, None, _ERRORS)
            data = wire.loads(row.data)
            if self._terminate(info, row, data):
                self._collect_garbage(row.uid)
            return cast(R, _validated(info, data)[0])

    def apply(self, objects: Sequence[Resource]) -> builtins.list[ApplyResult]:
        """Create or update every object, all or nothing, like `kubectl apply`.

        Every object is reviewed (against the store plus the batch) before the first write;
        any error raises ValidationFailed with all of them. Outcomes: `created`,
        `configured`, `unchanged` (same content, labels and annotations: no write).
        """
        infos = [self.kinds.of(obj) for obj in objects]
        check_unique(objects, infos)
        with self.transaction():
            plans = [self._plan(info, obj) for info, obj in zip(infos, objects, strict=True)]
            batch = admit.Batch(self, [plan.model for plan in plans])
            found = [self._review_plan(plan, batch) for plan in plans]
            admit.raise_errors([e for errors in found for e in errors])
            return [
                ApplyResult(self._execute(plan), plan.outcome, tuple(warnings))
                for plan, warnings in zip(plans, found, strict=True)
            ]

    # --- write steps --------------------------------------------------------------------

    def _prepare_create(
        self, info: KindInfo, obj: Resource, *, keep_status: bool = False
    ) -> tuple[Resource, Data]:
        data = wire.incoming(obj)
        if not keep_status and status_dropped_on_create(info.model):
            data.pop("status", None)
        meta = data.setdefault("metadata", {})
        for key in wire.SERVER_FIELDS:
            meta.pop(key, None)
        meta["namespace"] = clusterscope.scoped(
            info.model, meta.get("namespace") or names.DEFAULT_NAMESPACE
        )
        meta["name"] = meta.get("name") or generated_name(meta.get("generateName"))
        meta["uid"] = str(uuid.uuid4())
        meta["generation"] = 1
        meta["creationTimestamp"] = rfc3339(self._clock.now())
        data["apiVersion"], data["kind"] = info.api_version, info.kind
        return _validated(info, data)

    def _require(self, info: KindInfo, namespace: str, name: str) -> Row:
        row = self._load(info.id, namespace, name)
        if row is None:
            raise NotFound(f"{info.describe(namespace, name)} not found")
        return row

    def _write(
        self,
        info: KindInfo,
        data: Data,
        old: Row | None,
        event: EventType,
        *,
        bounded: bool = False,
    ) -> Row:
        row = wire.to_row(info.id, data, self._next_rv())
        if bounded:
            _check_size(info, row)
        if not self._save(row, old, event):
            raise AlreadyExists(f"{info.describe(row.namespace, row.name)} already exists")
        return row

    def _replace(
        self,
        info: KindInfo,
        row: Row,
        old: Data,
        model: Resource,
        data: Data,
        *,
        bounded: bool = False,
    ) -> Resource:
        """Write `data` over `row`: nothing if unchanged; removal if it is being deleted and
        its last finalizer just went."""
        if data == old:
            return model
        meta = data["metadata"]
        if meta.get("deletionTimestamp") and not meta.get("finalizers"):
            self._terminate(info, row, data)
            self._collect_garbage(row.uid)
        else:
            self._write(info, data, row, EventType.MODIFIED, bounded=bounded)
        model.metadata.resource_version = meta["resourceVersion"]
        return model

    def _terminate(self, info: KindInfo, row: Row, data: Data) -> bool:
        """Remove the object (True), or mark it deleted while finalizers remain (False)."""
        meta = data["metadata"]
        if meta.get("finalizers"):
            if not meta.get("deletionTimestamp"):
                meta["deletionTimestamp"] = rfc3339(self._clock.now())
                self._write(info, data, row, EventType.MODIFIED)
            return False
        self._drop(wire.to_row(info.id, data, self._next_rv()))
        return True

    def _collect_garbage(self, owner_uid: str) -> None:
        """Delete the dependents of a removed owner, cascading (iterative: no depth limit)."""
        pending = [owner_uid]
        while pending:
            owner = pending.pop()
            for dep in self._dependents(owner):
                if any(u != owner and self._uid_exists(u) for u in dep.owners):
                    continue
                info = self.kinds.by_id(dep.kind)
                if self._terminate(info, dep, wire.loads(dep.data)):
                    pending.append(dep.uid)

    # --- apply --------------------------------------------------------------------------

    def _plan(self, info: KindInfo, obj: Resource) -> _Plan:
        row = self._load(info.id, obj.namespace, obj.name) if obj.name else None
        if row is None:
            model, data = self._prepare_create(info, obj)
            return _Plan(info, model, data, None, None, Outcome.CREATED)
        old = wire.loads(row.data)
        model, data = _validated(info, wire.merged_apply(old, wire.incoming(obj)))
        if wire.same_applied(old, data):
            return _Plan(info, parse(info, row.data), old, row, old, Outcome.UNCHANGED)
        _bump_generation(old, data, model)
        return _Plan(info, model, data, row, old, Outcome.CONFIGURED)

    def _review_plan(self, plan: _Plan, batch: admit.Batch) -> builtins.list[FieldError]:
        if plan.outcome is Outcome.UNCHANGED:
            return []
        operation = Operation.CREATE if plan.row is None else Operation.UPDATE
        old = None if plan.row is None else parse(plan.info, plan.row.data)
        return admit.review_write(plan.model, operation=operation, store=self, old=old, batch=batch)

    def _execute(self, plan: _Plan) -> Resource:
        if plan.outcome is Outcome.UNCHANGED:
            return plan.model
        if plan.row is None or plan.old is None:
            self._write(plan.info, plan.data, None, EventType.ADDED, bounded=True)
            plan.model.metadata.resource_version = plan.data["metadata"]["resourceVersion"]
            return plan.model
        return self._replace(plan.info, plan.row, plan.old, plan.model, plan.data, bounded=True)


@dataclass(slots=True)
class _Plan:
    """One object of an `apply` batch, decided but not yet written."""

    info: KindInfo
    model: Resource
    data: Data
    row: Row | None
    old: Data | None
    outcome: Outcome


def status_dropped_on_create(model: type[Resource]) -> bool:
    """Whether a client's create of `model` drops the status it was given: a kind served
    with a `status` subresource, as kube-apiserver does for a CRD (an exported finished
    flow applied again must run, not come back finished). Not a Pod: the API refuses a
    client's bare Pod where vcflow runs pods, and a Pod's status is its runner's."""
    if model is Pod:
        return False
    try:
        return "status" in resources.of_model(model).subresources
    except KeyError:
        return False


#: the review of an internal-facing write: its errors only (no fieldValidation)
_ERRORS = ""


def _reviewed(
    store: StoreEngine,
    obj: Resource,
    operation: Operation,
    old: Resource | None,
    validation: str | None,
) -> tuple[FieldError, ...]:
    """A write's one admission review: none (`validation` None: an internal write), its
    errors only (`_ERRORS`: `admit.check`), or the whole review judged by fieldValidation,
    its warnings returned (`admit.judge`)."""
    if validation is None:
        return ()
    if validation == _ERRORS:
        admit.check(obj, operation=operation, store=store, old=old)
        return ()
    found = admit.review_write(obj, operation=operation, store=store, old=old)
    return tuple(admit.judge(found, Validation(validation)))


def _validated(info: KindInfo, data: Data) -> tuple[Resource, Data]:
    """The model of wire data, with the kind's defaults applied (data re-dumped if so)."""
    model = _model_of(info, data)
    if info.defaulter is not None and info.defaulter(model) is not False:
        namespace = (data.get("metadata") or {}).get("namespace")
        data = model.to_dict()
        if namespace is not None:  # (a cluster-scoped model does not dump its `""`)
            data.setdefault("metadata", {})["namespace"] = namespace
    return model, data


def _model_of(info: KindInfo, data: Data) -> Resource:
    """The model of wire data; ValidationFailed naming each field pydantic refused."""
    try:
        return info.model.model_validate(data)
    except pydantic.ValidationError as exc:
        meta = data.get("metadata") or {}
        raise _invalid(info, exc, data, meta.get("namespace", ""), meta.get("name", "")) from None


def _invalid(
    info: KindInfo, exc: pydantic.ValidationError, data: Data, namespace: str, name: str
) -> ValidationFailed:
    return ValidationFailed(
        [
            FieldError(message, path, info.kind, namespace, name)
            for path, _, message in modelerrors.schema_errors(exc, data)
        ]
    )


@functools.cache
def _status_only(model: type[Resource]) -> type[pydantic.BaseModel] | None:
    """A model of `model`'s status field alone (same type, same config), to validate a
    status write without the rest of the object; error paths read `status....` as in the
    whole object. None when that could differ from validating the whole object: no declared
    status, a status defaulting to something else than None, or validators of `model`
    itself (a `model_validator` sees every field)."""
    field = model.model_fields.get("status")
    found = model.__pydantic_decorators__
    validators = (found.validators, found.field_validators, found.root_validators)
    if field is None or field.default is not None or any(validators) or found.model_validators:
        return None
    if model.__pydantic_post_init__ is not None:
        return None
    annotation = cast(Any, field.annotation)
    name = f"{model.__name__}StatusOnly"
    return pydantic.create_model(name, __config__=model.model_config, status=(annotation, field))


def _with_status(info: KindInfo, base: Resource | None, row: Row, new: Data) -> Resource | None:
    """The model of a status write from `base` (None when it cannot be used): its status
    validated alone — the rest of `base` is the stored object, valid when written."""
    status_only = _status_only(info.model)
    if status_only is None or base is None or not _is_stored(info, base, row):
        return None
    try:
        status = cast(Any, status_only.model_validate(new)).status
    except pydantic.ValidationError as exc:
        raise _invalid(info, exc, new, row.namespace, row.name) from None
    return _rebased(base, status=status)


def _bound(info: KindInfo, base: Pod | None, row: Row, node_name: str) -> Resource | None:
    """The model of a binding from `base` (None when it cannot be used)."""
    if base is None or not _is_stored(info, base, row):
        return None
    spec = copy.copy(base.spec) if base.spec is not None else PodSpec()
    spec.node_name = node_name
    return _rebased(base, spec=spec)


def _is_stored(info: KindInfo, base: Resource, row: Row) -> bool:
    """Whether `base` is the stored object (as of `row`): a store-wide resourceVersion
    names one write of one object; the uid guards against a copy from another store."""
    return (
        type(base) is info.model
        and base.metadata.resource_version == str(row.rv)
        and base.metadata.uid == row.uid
    )


def _rebased(base: Resource, **fields: Any) -> Resource:
    """A shallow copy of `base` with `fields` replaced and its metadata copied (`_replace`
    stamps the new resourceVersion there): what parsing the written object would give,
    built without validating what `base` already holds."""
    out = copy.copy(base)
    values = {"metadata": copy.copy(base.metadata), **fields}
    out.__dict__.update(values)
    out.__pydantic_fields_set__.update(values)
    return out


def _bump_generation(old: Data, data: Data, model: Resource) -> None:
    if wire.content(old) != wire.content(data):
        generation = int(old["metadata"].get("generation") or 0) + 1
        data["metadata"]["generation"] = generation
        model.metadata.generation = generation


def _check_size(info: KindInfo, row: Row) -> None:
    """ValidationFailed for an object larger than `bounds.MAX_OBJECT_BYTES` as JSON (its
    characters are counted first: a character is at most 4 bytes, so few need no encoding)."""
    if len(row.data) <= bounds.MAX_OBJECT_BYTES // 4:
        return
    size = len(row.data.encode("utf-8", "surrogatepass"))
    if size > bounds.MAX_OBJECT_BYTES:
        error = FieldError(bounds.too_large(size), "", info.kind, row.namespace, row.name)
        raise ValidationFailed([error])


def _check_preconditions(info: KindInfo, row: Row, resource_version: str, uid: str) -> None:
    if resource_version and resource_version != str(row.rv):
        raise Conflict(_conflict_message(info, row, resource_version))
    if uid and uid != row.uid:
        raise Conflict(
            f"{info.describe(row.namespace, row.name)}: uid {uid} is not the stored "
            f"object's ({row.uid}): it was deleted and created again"
        )


def _check_bindable(info: KindInfo, data: Data, node_name: str) -> None:
    """Kubernetes' refusals of a binding (409 Conflict but for a missing node name)."""
    meta, node = data["metadata"], (data.get("spec") or {}).get("nodeName")
    namespace, name = meta["namespace"], meta["name"]
    what = info.describe(namespace, name)
    if not node_name:
        raise ValidationFailed(
            [FieldError("Required value", "target.name", "Binding", namespace, name)]
        )
    if meta.get("deletionTimestamp"):
        raise Conflict(f"{what} is being deleted, cannot be assigned to a host")
    if node and node != node_name:
        raise Conflict(f'{what} is already assigned to node "{node}"')


def _conflict_message(info: KindInfo, row: Row, given: str) -> str:
    return (
        f"{info.describe(row.namespace, row.name)}: the object has been modified "
        f"(resourceVersion {given}, stored {row.rv}); read it again and retry"
    )


_ALPHABET = string.ascii_lowercase + string.digits


def generated_name(prefix: object) -> str:
    """`generateName` + 5 random characters, as the API server does ("" without a prefix,
    which admission then rejects as a missing name)."""
    if not isinstance(prefix, str) or not prefix:
        return ""
    return prefix + "".join(secrets.choice(_ALPHABET) for _ in range(5))
