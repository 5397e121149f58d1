"""Tier 1: the Kubernetes API as vcflow speaks it, each convention written once: its description —
the resources served and their paths (`resources`), the OpenAPI schemas and CRDs made from
the models (`schemas`, `crds`), RBAC (`permissions`), events.k8s.io/v1 (`eventsv1`), the
table columns (`columns`) — and its JSON conventions: Status objects and the errors they
stand for (`status`), `fieldValidation` (`fieldvalidation`), admission warnings as a
response's texts (`warningtext`), watch streams' frames (`watchframes`) and what a
refused pod log means (`logrefusal`).

Pure: imports `vcflow.api` (with pydantic, as it does) and the standard library only, no
Kubernetes, HTTP or CLI library, so the server, its clients (`kubestore`, `operator`), the
webhook and the stores share it.
"""
