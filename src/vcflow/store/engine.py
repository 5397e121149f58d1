"""The write semantics every backend shares, on top of a few storage primitives.

`StoreEngine` (writes) on `backend.Backend` (transactions, reads, watches) implements the
`base.Store` protocol once; `memory.MemoryStore` and `sqlite.SqliteStore` only supply rows,
indexes, an event log and transactions. So both pass the same contract suite by
construction, and the rules live in one place:

- create: sets uid (uuid4), creationTimestamp (injected Clock), generation 1 and the
  namespace (`default` when empty); a missing name comes from `generateName`; server-owned
  metadata the client sent is ignored. Unlike a Kubernetes CRD with a status subresource,
  a status given on create is kept (tests and the conformance runner seed state that way).
- update: replaces everything but status and server-owned metadata; generation grows only
  when the content (`spec`) changes; an update that changes nothing writes nothing.
- update_status: replaces only status; never reviewed by admission (Kubernetes' webhooks do
  not see status-subresource writes either).
- preconditions: a non-empty `metadata.resourceVersion` (or `uid`) that is not the stored
  one raises Conflict; an empty one writes unconditionally.
- delete: with finalizers, only sets deletionTimestamp; the object goes when an update
  empties its finalizers. A removed object's dependents (objects whose ownerReferences
  name its uid, and that have no other owner still present) are deleted in the same
  transaction, cascading — Kubernetes' background garbage collection, done synchronously.
- every write allocates the next store-wide resourceVersion and appends one watch event.
- apply: create-or-update of a batch, all reviewed (against the store plus the batch)
  before the first write, in one transaction; `unchanged` objects are not written.
"""

from __future__ import annotations

import builtins
import secrets
import string
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, cast

import pydantic

from vcflow.api import loading, names
from vcflow.api.clock import rfc3339
from vcflow.api.errors import AlreadyExists, Conflict, FieldError, NotFound, ValidationFailed
from vcflow.api.meta import Resource
from vcflow.store import admit, wire
from vcflow.store.backend import Backend, parse
from vcflow.store.base import ApplyResult, EventType, KindInfo, Outcome, R
from vcflow.store.wire import Data, Row

Operation = admit.Operation


class StoreEngine(Backend):
    """The Store's writes; backends subclass it and implement `Backend`'s primitives."""

    # --- writes -------------------------------------------------------------------------

    def create(self, obj: R, *, admit: bool = True) -> R:
        """Store a new object; AlreadyExists if the name is taken; admission unless
        `admit=False` (internal writes that need no webhook). Admission warnings are not
        returned here; `apply` reports them."""
        info = self.kinds.of(obj)
        with self._atomic():
            model, data = self._prepare_create(info, obj)
            if admit:
                admit_check(self, model, Operation.CREATE)
            self._write(info, data, None, EventType.ADDED)  # AlreadyExists if taken
            model.metadata.resource_version = data["metadata"]["resourceVersion"]
            return cast(R, model)

    def update(self, obj: R, *, admit: bool = True) -> R:
        """Replace spec, labels, annotations, ownerReferences, finalizers (not status)."""
        info = self.kinds.of(obj)
        with self._atomic():
            row = self._require(info, obj.namespace, obj.name)
            _check_preconditions(info, row, obj.metadata.resource_version, obj.metadata.uid)
            old = wire.loads(row.data)
            model, data = _validated(info, wire.merged_update(old, wire.incoming(obj)))
            _bump_generation(old, data, model)
            if admit:
                admit_check(self, model, Operation.UPDATE, old=parse(info, row.data))
            return cast(R, self._replace(info, row, old, model, data))

    def update_status(self, obj: R) -> R:
        """Replace only the status (the status subresource); no admission."""
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
    ) -> R:
        """`update_status` with the status in wire form, for a controller that renders a big
        status as data (no model of it to build and dump); same preconditions, and the
        status is validated with the object as always."""
        info = self.kinds.of_model(kind)
        data = {"status": None if status is None else dict(status)}
        return cast(R, self._write_status(info, namespace, name, data, resource_version, uid))

    def _write_status(
        self, info: KindInfo, namespace: str, name: str, new: Data, resource_version: str, uid: str
    ) -> Resource:
        with self._atomic():
            row = self._require(info, namespace, name)
            _check_preconditions(info, row, resource_version, uid)
            old = wire.loads(row.data)
            model, data = _validated(info, wire.merged_status(old, new))
            return self._replace(info, row, old, model, data)

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

        Runs the DELETE review (SEMANTICS row 11) unless `force`. Returns the last state.
        """
        info = self.kinds.of_model(kind)
        with self._atomic():
            row = self._require(info, namespace, name)
            if resource_version and resource_version != str(row.rv):
                raise Conflict(_conflict_message(info, row, resource_version))
            if not force:
                admit_check(self, parse(info, row.data), Operation.DELETE)
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
        _check_unique(objects, infos)
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

    def _prepare_create(self, info: KindInfo, obj: Resource) -> tuple[Resource, Data]:
        data = wire.incoming(obj)
        meta = data.setdefault("metadata", {})
        for key in wire.SERVER_FIELDS:
            meta.pop(key, None)
        meta["namespace"] = meta.get("namespace") or names.DEFAULT_NAMESPACE
        meta["name"] = meta.get("name") or _generated_name(meta.get("generateName"))
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

    def _write(self, info: KindInfo, data: Data, old: Row | None, event: EventType) -> Row:
        row = wire.to_row(info.id, data, self._next_rv())
        if not self._save(row, old, event):
            raise AlreadyExists(f"{info.describe(row.namespace, row.name)} already exists")
        return row

    def _replace(
        self, info: KindInfo, row: Row, old: Data, model: Resource, data: Data
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
            self._write(info, data, row, EventType.MODIFIED)
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
            self._write(plan.info, plan.data, None, EventType.ADDED)  # AlreadyExists if taken
            plan.model.metadata.resource_version = plan.data["metadata"]["resourceVersion"]
            return plan.model
        return self._replace(plan.info, plan.row, plan.old, plan.model, plan.data)


@dataclass(slots=True)
class _Plan:
    """One object of an `apply` batch, decided but not yet written."""

    info: KindInfo
    model: Resource
    data: Data
    row: Row | None
    old: Data | None
    outcome: Outcome


def admit_check(
    store: StoreEngine, obj: Resource, operation: Operation, old: Resource | None = None
) -> None:
    admit.check(obj, operation=operation, store=store, old=old)


def _validated(info: KindInfo, data: Data) -> tuple[Resource, Data]:
    """The model of wire data, with the kind's defaults applied (data re-dumped if so)."""
    try:
        model = info.model.model_validate(data)
    except pydantic.ValidationError as exc:
        meta = data.get("metadata") or {}
        ns, name = meta.get("namespace", ""), meta.get("name", "")
        raise ValidationFailed(
            [
                FieldError(message, path, info.kind, ns, name)
                for path, _, message in loading.schema_errors(exc, data)
            ]
        ) from None
    if info.defaulter is not None and info.defaulter(model) is not False:
        data = model.to_dict()
    return model, data


def _bump_generation(old: Data, data: Data, model: Resource) -> None:
    if wire.content(old) != wire.content(data):
        generation = int(old["metadata"].get("generation") or 0) + 1
        data["metadata"]["generation"] = generation
        model.metadata.generation = generation


def _check_preconditions(info: KindInfo, row: Row, resource_version: str, uid: str) -> None:
    if resource_version and resource_version != str(row.rv):
        raise Conflict(_conflict_message(info, row, resource_version))
    if uid and uid != row.uid:
        raise Conflict(
            f"{info.describe(row.namespace, row.name)}: uid {uid} is not the stored "
            f"object's ({row.uid}): it was deleted and created again"
        )


def _conflict_message(info: KindInfo, row: Row, given: str) -> str:
    return (
        f"{info.describe(row.namespace, row.name)}: the object has been modified "
        f"(resourceVersion {given}, stored {row.rv}); read it again and retry"
    )


def _check_unique(objects: Sequence[Resource], infos: Sequence[KindInfo]) -> None:
    seen: set[tuple[str, str, str]] = set()
    errors = []
    for obj, info in zip(objects, infos, strict=True):
        key = (info.id, obj.namespace, obj.name)
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


_ALPHABET = string.ascii_lowercase + string.digits


def _generated_name(prefix: object) -> str:
    """`generateName` + 5 random characters, as the API server does ("" without a prefix,
    which admission then rejects as a missing name)."""
    if not isinstance(prefix, str) or not prefix:
        return ""
    return prefix + "".join(secrets.choice(_ALPHABET) for _ in range(5))
