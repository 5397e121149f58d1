"""The vcjob an entry of a `FlowState` creates now (`build`), or why it creates none yet:
its `when`/`switch` decided an outcome (the flow language, docs/flow-features.md part II),
its template is missing (TemplateNotFound, until it appears), its targets' outputs are still
to be read, or it is a `for` entry, expanded into its items here. The vcjob carries the
scheduling annotations of the flow's `schedulingPolicy` (`scheduled`). Pure; `FlowIndex.decide`
calls it for each entry it may create.
"""

from __future__ import annotations

from collections.abc import Mapping

from vcflow.api import arguments, foreach
from vcflow.api.jobtemplate import JobTemplate
from vcflow.api.substitution import SubstitutionError
from vcflow.api.vcjob import VCJob
from vcflow.reconcile import expansion, language, scheduling
from vcflow.reconcile import jobs as jobbuild
from vcflow.reconcile import outputs as reading
from vcflow.reconcile.entries import TEMPLATE_NOT_FOUND, Entry, State
from vcflow.reconcile.flowstate import FlowState


def build(state: FlowState, entry: Entry, templates: Mapping[str, JobTemplate]) -> VCJob | None:
    """The entry's vcjob, or None: it waits (a template, a target's outputs), or its
    `when`/`switch` decided an outcome without one (the entry's state says)."""
    spec_entry = state.flow.flows[entry.index]
    wanted = spec_entry.template_name
    env: dict[str, str] = {}
    case: int | None = None
    item = expansion.item_value(state, entry)
    basis = state.entries[entry.item.group] if entry.item is not None else entry
    if state.args_env is not None:
        if state.outputs.waiting_for(entry) is not None:
            return None  # (its outputs are read before the next decision)
        gate = language.gate(entry, spec_entry, state.entries, state.args, state.outputs, item)
        if gate.state == State.NONE and item is None and spec_entry.for_each is not None:
            gate = _expand(state, entry)
        if gate.state != State.NONE:
            entry.verdict, entry.verdict_message = gate.reason, gate.message
            state.ready.move(entry, gate.state, None)
            if entry.name in state.fans:
                expansion.drop(state, state.fans[entry.name])  # (its held items)
            return None
        if entry.name in state.fans:
            return None  # (expanded: its items are the candidates now)
        wanted, case = gate.template, gate.case
        if case is not None:
            record = state.history.get(entry.job, {"name": entry.job})
            state.history[entry.job] = {**record, "template": wanted, "switchCase": case}
        env[arguments.ENV_ARGS] = state.args_env
        env[reading.ENV_INPUTS] = language.inputs_env(basis, state.outputs)
        if entry.name in state.exits.names:
            env[language.ENV_FLOW_PHASE] = language.flow_phase_env(state.exits)
    template = templates.get(wanted)
    if template is None:
        entry.reason = TEMPLATE_NOT_FOUND
        entry.message = f'jobtemplate.flow.volcano.sh "{wanted}" not found'
        state.template_waiters.setdefault(wanted, set()).add(entry.name)
        return None
    creating = entry.attempt + 1 if entry.renew else entry.attempt
    language_used = state.args_env is not None
    try:
        job = jobbuild.build_job(
            state.flow,
            spec_entry,
            template,
            attempt=creating,
            env=env if language_used else None,
            case=case,
            values=(state.args, state.outputs.of_targets(basis)) if language_used else None,
            item=item,
        )
    except SubstitutionError as exc:
        entry.verdict, entry.verdict_message = language.SUBSTITUTION_FAILED, str(exc)
        state.ready.move(entry, State.FAILED, None)
        return None
    entry.creating = creating
    if state.scheduling.policy.annotates:
        job.metadata.annotations.update(scheduled(state, basis, templates))
    return job


def scheduled(
    state: FlowState, entry: Entry, templates: Mapping[str, JobTemplate]
) -> dict[str, str]:
    """The scheduling annotations of the vcjob of `entry` (of a `for` entry: each item's):
    its flow's age, its rank, what its successors need (`reconcile.scheduling`)."""
    found = state.scheduling
    policy = found.policy
    rank = found.ranks(state.flow, state.history).get(entry.name) if policy.critical_path else None
    need = None
    if policy.hold_seconds > 0 and entry.successors:
        need = scheduling.successors_need(state.flow, entry.successors, templates)
    return scheduling.job_annotations(state.flow, policy, rank=rank, need=need)


def _expand(state: FlowState, group: Entry) -> language.Gate:
    """A `for` entry whose dependencies are met and whose `when` held: its items, or
    why it has none (NoItems: Skipped) or cannot have them (ItemsInvalid: Failed).
    Once only: an entry expanded already (a retry reset it) keeps its items."""
    if group.name in state.fans:
        expansion.rerun(state, group, state.fans[group.name])  # (its held items go)
        return language.Gate()
    try:
        values = expansion.values_of(state, group, state.outputs.of_targets(group))
    except foreach.ItemsError as exc:
        return language.Gate(state=State.FAILED, reason=foreach.ITEMS_INVALID, message=str(exc))
    if not values:
        return language.Gate(state=State.SKIPPED, reason=foreach.NO_ITEMS, message="for: no items")
    expansion.expand(state, group, values)
    return language.Gate()
