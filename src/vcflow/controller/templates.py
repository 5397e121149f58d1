"""The JobTemplates a flow sync reads: its namespace's, from the store on demand."""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from vcflow.api.errors import NotFound
from vcflow.api.jobtemplate import JobTemplate
from vcflow.store.base import Store


class Templates(Mapping[str, JobTemplate]):
    """JobTemplates of one namespace, read from the store on demand (no full list per sync),
    each once per sync: the items of a `for` share one template."""

    def __init__(self, store: Store, namespace: str) -> None:
        self._store = store
        self._ns = namespace
        self._read: dict[str, JobTemplate | None] = {}

    def __getitem__(self, name: str) -> JobTemplate:
        if name not in self._read:
            try:
                self._read[name] = self._store.get(JobTemplate, self._ns, name)
            except NotFound:
                self._read[name] = None
        found = self._read[name]
        if found is None:
            raise KeyError(name)
        return found

    def __iter__(self) -> Iterator[str]:
        return iter(t.name for t in self._store.list(JobTemplate, self._ns))

    def __len__(self) -> int:
        return len(self._store.list(JobTemplate, self._ns))
