"""Tier 0, beside `api`: the pod server side — the detached processes that run pods apart
from the control plane (`python -m vcflow.podserver`, see `server`), and the state-directory
formats they share with it (`podfs`, `statusfile`, `seals`, `ownership`, `logtimes`).

Standard library only, and nothing else of vcflow (one import-linter contract): the server
starts at every first launch, so it must start fast and never load the control plane.
`vcflow.runtime` imports it; it imports no other vcflow package."""
