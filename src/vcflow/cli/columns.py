"""The table `vcflow get` prints per kind: the kind's printer columns (`kubeapi.columns`, the
same the server's Table responses carry), upper-cased as kubectl prints them, the wide
ones only with `-o wide`, NAMESPACE first with `-A`. A flow's wide table adds ETA
(`etatext`): the estimate needs the flow controller's estimator, a tier above kubeapi's,
so the server's Table responses do not carry it.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from vcflow.api.jobflow import JobFlow
from vcflow.api.meta import Resource
from vcflow.cli import etatext, kinds
from vcflow.kubeapi import columns as printer
from vcflow.kubeapi import resources


def columns(kind: kinds.Kind, *, wide: bool, namespaced: bool) -> list[printer.Column]:
    """The columns of `kind`'s table; NAMESPACE first for `-A`."""
    chosen = [c for c in printer.of(resources.of_model(kind.model)) if wide or not c.priority]
    if wide and kind.model is JobFlow:
        chosen.append(ETA)
    return [printer.NAMESPACE, *chosen] if namespaced else chosen


def _eta(obj: Resource, now: datetime) -> str:
    return etatext.eta_cell(obj, now) if isinstance(obj, JobFlow) else ""


#: `get jf -o wide`: when the flow should end (`-` once it has, `<unknown>` without estimates)
ETA = printer.Column(
    "ETA", _eta, priority=1, description="When the flow should end, by its estimates."
)


def headers(cols: Sequence[printer.Column]) -> list[str]:
    return [c.name.upper() for c in cols]


def rows(
    objects: Sequence[Resource], cols: Sequence[printer.Column], now: datetime
) -> list[list[str]]:
    return [printer.cells(obj, cols, now) for obj in objects]
