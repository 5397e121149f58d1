"""Lifecycle-policy rules of the vcjob webhook (reference §6.4, rule 11) with Volcano's messages,
and the warning for a `*` event that restarts (Volcano bug B3). One call checks one list: the
job's `policies` or one task's. Pure.
"""

from __future__ import annotations

from collections.abc import Sequence

from vcflow.api.errors import FieldError
from vcflow.api.phases import USER_ACTIONS, USER_EVENTS, Action, Event
from vcflow.api.vcjob import LifecyclePolicy

RESTART_ACTIONS = frozenset(
    {Action.RESTART_JOB, Action.RESTART_TASK, Action.RESTART_POD, Action.RESTART_PARTITION}
)
STAR_ALONE = "if there's * here, no other policy should be here"
VALID_EVENTS = f"valid events are [{' '.join(USER_EVENTS)}]"
VALID_ACTIONS = f"valid actions are [{' '.join(USER_ACTIONS)}]"


def policy_events(policy: LifecyclePolicy) -> list[str]:
    """`events` then `event`, duplicates dropped (Volcano's getEventList); empty strings skipped."""
    listed = [*(policy.events or []), *([policy.event] if policy.event else [])]
    return list(dict.fromkeys(e for e in listed if e))


def validate_policies(policies: Sequence[LifecyclePolicy] | None, path: str) -> list[FieldError]:
    """Volcano's validatePolicies on one list. Volcano stops at the first failing policy;
    here each policy reports its first problem and the others are still checked."""
    errors: list[FieldError] = []
    seen_events: set[str] = set()
    seen_codes: set[int] = set()
    for j, policy in enumerate(policies or []):
        ppath = f"{path}[{j}]"
        events = policy_events(policy)
        if events and policy.exit_code is not None:
            errors.append(FieldError("must not specify event and exitCode simultaneously", ppath))
        elif events:
            errors += _event_policy(policy, events, seen_events, ppath)
        elif policy.exit_code is not None:
            errors += _exit_code_policy(policy.exit_code, seen_codes, ppath)
        else:
            errors.append(FieldError("either event and exitCode should be specified", ppath))
    if Event.ANY in seen_events and len(seen_events) > 1:
        errors.append(FieldError(STAR_ALONE, path))
    return errors


def _event_policy(
    policy: LifecyclePolicy, events: list[str], seen: set[str], path: str
) -> list[FieldError]:
    for event in events:
        if event not in USER_EVENTS:
            message = f'Invalid value: "{event}": invalid policy event; {VALID_EVENTS}'
            return [FieldError(message, path)]
        if policy.action not in USER_ACTIONS:
            message = (
                f'Invalid value: "{policy.action or ""}": invalid policy action; {VALID_ACTIONS}'
            )
            return [FieldError(message, f"{path}.action")]
        if event in seen:
            return [FieldError(f"duplicate event {event}  across different policy", path)]
        seen.add(event)
    return []


def _exit_code_policy(code: int, seen: set[int], path: str) -> list[FieldError]:
    """Volcano does not check the action of an exit-code policy; neither do we."""
    if code == 0:
        return [FieldError("0 is not a valid error code", f"{path}.exitCode")]
    if code in seen:
        return [FieldError(f"duplicate exitCode {code}", f"{path}.exitCode")]
    seen.add(code)
    return []


def star_restart_warnings(
    policies: Sequence[LifecyclePolicy] | None, path: str
) -> list[FieldError]:
    """B3: `*` also matches TaskCompleted, so a restart action fires when a task succeeds."""
    warnings: list[FieldError] = []
    for j, policy in enumerate(policies or []):
        if Event.ANY in policy_events(policy) and policy.action in RESTART_ACTIONS:
            warnings.append(
                FieldError(
                    f'event "*" with action {policy.action} also matches TaskCompleted: the job '
                    "restarts each time a task completes, and a job whose pods all succeed is "
                    "restarted until it fails (Volcano bug B3); list the failure events instead, "
                    "e.g. events: [PodFailed, PodEvicted, TaskFailed]",
                    f"{path}[{j}]",
                    warning=True,
                )
            )
    return warnings
