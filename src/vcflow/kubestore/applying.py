"""`KubeStore.apply` (kubectl apply) over the Kubernetes API, which has no multi-object
transaction: a batch of objects each created or updated if changed, all of them dry-run
(`dryRun=All`) before any is written and the flows also judged against the input's own
templates; one object another writer got to first read and planned again; a write that
still fails undoes the writes before it (see `store`'s module docstring).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from vcflow.api import clusterscope
from vcflow.api import names as apinames
from vcflow.api.errors import (
    AlreadyExists,
    Conflict,
    FieldError,
    NotFound,
    StoreError,
    ValidationFailed,
)
from vcflow.api.jobflow import JobFlow
from vcflow.api.jobtemplate import JobTemplate
from vcflow.api.meta import Resource
from vcflow.api.platform import Platform
from vcflow.kubeapi.status import Forbidden, Unauthorized
from vcflow.kubestore.calls import Calls, warnings
from vcflow.kubestore.client import Unreachable
from vcflow.store import admit, wire
from vcflow.store.base import ApplyResult, KindInfo, Outcome, Store, check_unique

#: tries of one object's write in an apply when another writer got there first (409
#: AlreadyExists or Conflict, 404 on an update): each reads it and plans it again
APPLY_RETRIES = 5
#: kinds written first in an apply (others refer to them by name)
_FIRST = (JobTemplate,)


class Applier:
    """One apply: the store's requests (`calls`), and the store itself for what admission
    reads and to delete what an undone apply created."""

    def __init__(self, calls: Calls, store: Store) -> None:
        self.calls, self.store = calls, store

    def apply(self, objects: Sequence[Resource]) -> list[ApplyResult]:
        """kubectl apply: each object read, then created or updated if changed; all of them
        dry-run first (`dryRun=All`), so one admission refuses writes nothing — a flow also
        judged against the input's own templates (`_against_input`). Templates are written
        before the flows that name them. One object another writer got to first is read
        and planned again, up to APPLY_RETRIES times (`_settled`); when a write still
        fails, the writes before it are undone (`_undo`). Warnings: the `Warning` headers
        of the writes; on a refusal, those of every dry run, refused or not (as the
        embedded store's apply reports its whole review)."""
        infos = [self.calls.kinds.of(obj) for obj in objects]
        check_unique(objects, infos)
        plans = [self._plan(info, obj) for info, obj in zip(infos, objects, strict=True)]
        errors: list[FieldError] = []
        warned: list[FieldError] = []
        refused: set[int] = set()
        for index, plan in enumerate(plans):
            try:
                plans[index], tried = self._settled(plan, dry_run=True)
                warned.extend(tried.warnings)
            except ValidationFailed as exc:
                errors.extend(exc.errors)
                warned.extend(exc.warnings)
                refused.add(index)
            except (AlreadyExists, Conflict, Forbidden) as exc:
                raise exc from None
            except StoreError as exc:  # (400 Bad Request: a name the server refuses...)
                meta = plan.data["metadata"]
                errors.append(
                    FieldError(
                        str(exc), "", plan.info.kind, meta["namespace"], meta.get("name", "")
                    )
                )
                refused.add(index)
        errors += self._against_input(plans, refused)
        if errors:
            raise ValidationFailed(errors, warned)
        order = sorted(range(len(plans)), key=lambda i: not isinstance(objects[i], _FIRST))
        results: dict[int, ApplyResult] = {}
        done: list[tuple[_Plan, ApplyResult]] = []
        try:
            for index in order:
                plan, results[index] = self._settled(plans[index], dry_run=False)
                done.append((plan, results[index]))
        except Exception as exc:
            left = self._undo(done)
            if isinstance(exc, ValidationFailed):
                raise ValidationFailed([*exc.errors, *left], exc.warnings) from None
            for error in left:
                exc.add_note(str(error))
            raise
        return [results[i] for i in range(len(plans))]

    def _settled(self, plan: _Plan, *, dry_run: bool) -> tuple[_Plan, ApplyResult]:
        """`plan` written (or dry-run), and the plan that was: on AlreadyExists (another
        writer created it since it was read), Conflict (updated since) or NotFound (deleted
        since), the object is read and planned again — unchanged when it is now what the
        input says, as kubectl apply retried says — up to APPLY_RETRIES tries."""
        for attempt in range(1, APPLY_RETRIES + 1):
            try:
                return plan, self._write_plan(plan, dry_run=dry_run)
            except (AlreadyExists, Conflict, NotFound) as exc:
                if attempt == APPLY_RETRIES or (isinstance(exc, NotFound) and plan.old is None):
                    raise
            plan = self._plan(plan.info, plan.obj)
        raise AssertionError("unreachable")

    def _against_input(self, plans: Sequence[_Plan], refused: set[int]) -> list[FieldError]:
        """The errors of the flows judged against the input's templates laid over the
        stored ones (`admit.Batch`, as the embedded store's apply does), for each flow that
        names a template the input creates or changes. The server judged each dry-run
        flow against the stored templates only: a template of the input was "not found"
        there (a warning, the entry would wait) and what the flow's entries make of it
        went unchecked. Flows the server refused already are left to its errors."""
        changed = {
            (plan.data["metadata"]["namespace"], plan.obj.name)
            for plan in plans
            if isinstance(plan.obj, JobTemplate) and not plan.unchanged
        }
        flows = [
            plan
            for index, plan in enumerate(plans)
            if index not in refused
            and isinstance(plan.obj, JobFlow)
            and not plan.unchanged
            and any(
                (plan.data["metadata"]["namespace"], name) in changed
                for e in plan.obj.flows
                for name in e.templates_named
            )
        ]
        if not flows:
            return []
        given = [
            self.calls.model(plan.info, dict(plan.data))
            for plan in plans
            if isinstance(plan.obj, JobTemplate)
        ]
        batch = admit.Batch(self.store, given)
        errors: list[FieldError] = []
        for plan in flows:
            old = self.calls.model(plan.info, dict(plan.old)) if plan.old is not None else None
            found = admit.review_write(
                self.calls.model(plan.info, dict(plan.data)),
                operation=admit.Operation.CREATE if old is None else admit.Operation.UPDATE,
                store=self.store,
                old=old,
                batch=batch,
                warnings=False,
                platform=Platform.CLUSTER,  # (what only a local run cannot do: the server says)
            )
            errors += [e for e in found if not e.warning]
        return errors

    def _undo(self, done: Sequence[tuple[_Plan, ApplyResult]]) -> list[FieldError]:
        """Undo the writes of an apply that failed midway, last first: an object it
        created is deleted (a JobTemplate without force: the server keeps one that another
        writer's unfinished flow uses already), one it updated is written back as it was
        (unless another writer changed it since). What could not be undone, as errors."""
        left: list[FieldError] = []
        for plan, result in reversed(done):
            obj = result.object
            namespace = obj.namespace or apinames.DEFAULT_NAMESPACE
            try:
                if result.outcome is Outcome.CREATED:
                    self._remove(plan.info, namespace, obj.name, obj.metadata.uid or "")
                elif result.outcome is Outcome.CONFIGURED and plan.old is not None:
                    self._restore(plan)
            except (StoreError, ValidationFailed) as exc:
                verb = "created" if result.outcome is Outcome.CREATED else "changed"
                text = " ".join(str(exc).split())
                left.append(
                    FieldError(
                        f"{verb} by this apply and left so: {text}",
                        "",
                        plan.info.kind,
                        namespace,
                        obj.name,
                    )
                )
        return left

    def _remove(self, info: KindInfo, namespace: str, name: str, uid: str) -> None:
        """Delete the object this apply created (by uid: one deleted and created again by
        another writer since is theirs), at the resourceVersion read with that uid."""
        for attempt in range(1, APPLY_RETRIES + 1):
            try:
                meta = self.calls.get_data(info, namespace, name)["metadata"]
                if uid and meta.get("uid") != uid:
                    return
                self.store.delete(
                    info.model,
                    namespace,
                    name,
                    force=info.model is not JobTemplate,
                    resource_version=str(meta.get("resourceVersion") or ""),
                )
                return
            except NotFound:
                return
            except Conflict:
                if attempt == APPLY_RETRIES:
                    raise

    def _restore(self, plan: _Plan) -> None:
        """Write back the object `plan` updated as it was, while it holds what this apply
        wrote (its status aside: a controller writes that); Conflict when another writer
        changed it since."""
        assert plan.old is not None
        meta = plan.data["metadata"]
        namespace, name = meta["namespace"], meta["name"]
        path = self.calls.resource(plan.info).path(namespace, name)
        for attempt in range(1, APPLY_RETRIES + 1):
            current = self.calls.get_data(plan.info, namespace, name)
            now = current["metadata"]
            if now.get("uid") != meta.get("uid") or not wire.same_applied(current, plan.data):
                raise Conflict("another writer changed it since")
            body = {k: v for k, v in plan.old.items() if k != "status"}
            body["metadata"] = {**plan.old["metadata"], "resourceVersion": now["resourceVersion"]}
            try:
                self.calls.call(plan.info, "PUT", path, namespace=namespace, name=name, body=body)
                return
            except Conflict:
                if attempt == APPLY_RETRIES:
                    raise

    def _plan(self, info: KindInfo, obj: Resource) -> _Plan:
        namespace = clusterscope.scoped(info.model, obj.namespace or apinames.DEFAULT_NAMESPACE)
        incoming = wire.incoming(obj)
        incoming.setdefault("metadata", {})["namespace"] = namespace
        try:
            old = self.calls.get_data(info, namespace, obj.name) if obj.name else None
        except NotFound:
            old = None
        except (StoreError, ValidationFailed) as exc:  # a name the server refuses
            if isinstance(exc, Unreachable | Unauthorized | Forbidden):
                raise
            old = None  # (the dry-run create then says what is wrong with it)
        if old is None:
            return _Plan(info, obj, incoming, None)
        old.setdefault("apiVersion", info.api_version)
        old.setdefault("kind", info.kind)
        merged = wire.merged_apply(old, incoming)
        merged["metadata"].setdefault("namespace", namespace)  # (a cluster object has none)
        model = self.calls.model(info, merged)
        if info.defaulter is not None and info.defaulter(model) is not False:
            merged = {**model.to_dict(), "metadata": merged["metadata"]}
        return _Plan(info, obj, merged, old)

    def _write_plan(self, plan: _Plan, *, dry_run: bool) -> ApplyResult:
        if plan.unchanged:
            assert plan.old is not None
            return ApplyResult(self.calls.model(plan.info, plan.old), Outcome.UNCHANGED)
        meta = plan.data["metadata"]
        namespace, name = meta["namespace"], meta.get("name") or ""
        path = self.calls.resource(plan.info).path(namespace)
        query = [("dryRun", "All")] if dry_run else []
        if plan.old is None:
            body = {**plan.data, "metadata": dict(meta)}
            for key in wire.SERVER_FIELDS:
                body["metadata"].pop(key, None)
            response = self.calls.call(
                plan.info, "POST", path, namespace=namespace, name=name, query=query, body=body
            )
            outcome = Outcome.CREATED
        else:
            body = {**plan.data}
            body.pop("status", None)
            path = self.calls.resource(plan.info).path(namespace, name)
            response = self.calls.call(
                plan.info, "PUT", path, namespace=namespace, name=name, query=query, body=body
            )
            outcome = Outcome.CONFIGURED
        created = self.calls.model(plan.info, response.json())
        return ApplyResult(created, outcome, warnings(plan.info, response, namespace, created.name))


class _Plan:
    """One object of an apply: what to write, and the stored object (None: create)."""

    __slots__ = ("data", "info", "obj", "old")

    def __init__(
        self, info: KindInfo, obj: Resource, data: dict[str, Any], old: dict[str, Any] | None
    ) -> None:
        self.info, self.obj, self.data, self.old = info, obj, data, old

    @property
    def unchanged(self) -> bool:
        """Whether the stored object is what the input says (nothing to write)."""
        return self.old is not None and wire.same_applied(self.old, self.data)
