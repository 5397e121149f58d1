"""`vcflow retry`'s request (the `vcflow.io/retry` annotation, JSON) and which entries it
resets (docs/flow-features.md §5): those that failed or were skipped; with
`restartSuccessful`, the named Completed ones (all without names) and every entry downstream
of the named — never an upstream one —, a `for` entry with its items; and how each is reset.
Pure; `FlowIndex` calls them.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from vcflow.api import clock
from vcflow.api.jobflow import JobFlow
from vcflow.reconcile import history
from vcflow.reconcile.entries import MET, OUTCOMES, Entry, State, contribution, parse_time
from vcflow.reconcile.readiness import Readiness


@dataclass(frozen=True)
class RetryRequest:
    """What `vcflow retry` asks; `id` makes each request one to carry out once."""

    id: str
    at: datetime
    entries: tuple[str, ...] | None = None
    restart_successful: bool = False

    def to_annotation(self) -> str:
        data: dict[str, Any] = {"id": self.id, "at": clock.rfc3339(self.at)}
        if self.entries is not None:
            data["entries"] = list(self.entries)
        if self.restart_successful:
            data["restartSuccessful"] = True
        return json.dumps(data, separators=(",", ":"))

    @classmethod
    def parse(cls, text: str) -> RetryRequest | None:
        try:
            data = json.loads(text)
            at = clock.parse_rfc3339(str(data["at"]))
            entries = data.get("entries")
            return cls(
                str(data["id"]),
                at,
                None if entries is None else tuple(str(e) for e in entries),
                bool(data.get("restartSuccessful", False)),
            )
        except (ValueError, KeyError, TypeError):
            return None


def to_reset(entries: Mapping[str, Entry], request: RetryRequest) -> list[Entry]:
    """The entries the request runs again, in flow order. A `for` entry restarted brings its
    ended items along: they are what runs again (the entry is expanded once)."""
    chosen = {e.name: e for e in entries.values() if e.state in (State.FAILED, State.SKIPPED)}
    if request.restart_successful:
        named = request.entries
        if named is None:
            todo = list(entries.values())  # (all: every entry that has an outcome)
        else:
            todo = [entries[n] for n in named if n in entries]
        items: dict[str, list[Entry]] = {}
        for e in entries.values():
            if e.item is not None:
                items.setdefault(e.item.group, []).append(e)
        seen: set[str] = set()
        while todo:
            entry = todo.pop()
            if entry.name in seen:
                continue
            seen.add(entry.name)
            if _ended(entry, items.get(entry.name)):
                chosen[entry.name] = entry
                todo.extend(items.get(entry.name, ()))
            todo.extend(entries[s] for s in entry.successors)
    return sorted(chosen.values(), key=lambda e: e.rank)


def _ended(entry: Entry, items: list[Entry] | None) -> bool:
    """Has it an outcome? A `for` entry's is its items' (`FanOut.outcome`): its own state
    is settled from theirs later (a restored index has it Live until then)."""
    if not items:
        return entry.state in OUTCOMES
    states = [i.state for i in items]
    return State.FAILED in states or all(s in OUTCOMES for s in states)


def reset(ready: Readiness, items: history.Items, entry: Entry, at: datetime) -> None:
    """Run the entry again: a new attempt, with a fresh retry budget, due `at` when it had a
    vcjob (the old one goes first, as for a retry); else it is just not skipped any more.
    A probe that had met its dependency meets it no more: the new run waits again."""
    for target in list(entry.probe_met):
        entry.probe_met = entry.probe_met - {target}
        after = contribution(entry.outcome, ready.entries[target].state)
        ready.count_edge(entry, target, MET, after)
    entry.verdict = entry.verdict_message = ""
    ready.candidates.add(entry.name)
    if entry.state == State.SKIPPED or entry.job not in items:
        ready.move(entry, State.NONE, None)
        return
    entry.first_attempt = entry.attempt + 1
    entry.next_at, entry.ended, entry.renew = at, "retried", True
    ready.move(entry, State.BACKOFF, entry.phase)
    history.retry_due(items, entry, at)


def flow_deadline(flow: JobFlow, last_retry: str | None, since: datetime | None) -> datetime | None:
    """When the flow's activeDeadlineSeconds passes: counted from `since`, else from the
    last retry carried out (`status.lastRetry`), else from its creation."""
    seconds = flow.spec.active_deadline_seconds if flow.spec else None
    if not seconds:
        return None
    start = since
    if start is None:
        start = parse_time(flow.metadata.creation_timestamp)
        done = RetryRequest.parse(last_retry) if last_retry else None
        if done is not None and (start is None or done.at > start):
            start = done.at
    return None if start is None else start + timedelta(seconds=seconds)
