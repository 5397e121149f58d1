"""The table `vcflow get` prints per kind: the kind's printer columns (`kubeapi.columns`, the
same the server's Table responses carry), upper-cased as kubectl prints them, the wide
ones only with `-o wide`, NAMESPACE first with `-A`.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from vcflow.api.meta import Resource
from vcflow.cli import kinds
from vcflow.kubeapi import columns as printer
from vcflow.kubeapi import resources


def columns(kind: kinds.Kind, *, wide: bool, namespaced: bool) -> list[printer.Column]:
    """The columns of `kind`'s table; NAMESPACE first for `-A`."""
    chosen = [c for c in printer.of(resources.of_model(kind.model)) if wide or not c.priority]
    return [printer.NAMESPACE, *chosen] if namespaced else chosen


def headers(cols: Sequence[printer.Column]) -> list[str]:
    return [c.name.upper() for c in cols]


def rows(
    objects: Sequence[Resource], cols: Sequence[printer.Column], now: datetime
) -> list[list[str]]:
    return [printer.cells(obj, cols, now) for obj in objects]
