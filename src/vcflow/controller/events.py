"""The controllers' event recorder: the store's (`vcflow.store.events`), re-exported so the
controller code reads `events.Recorder`, `events.NORMAL`, `events.WARNING`."""

from vcflow.store.events import COMPONENT, NORMAL, WARNING, Recorder

__all__ = ["COMPONENT", "NORMAL", "WARNING", "Recorder"]
