"""Tier 7: `vcflow server`, the embedded control plane (store, controllers, local runtime)
behind the Kubernetes API conventions, so kubectl, the Kubernetes clients and `vcflow
--server` work against it."""
