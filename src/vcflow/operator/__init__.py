"""Tier 7, I/O: `vcflow operator`, the JobFlow and JobTemplate controllers of a Kubernetes
cluster over `kubestore.KubeStore` (scoped to the namespaces given), with leader election
on a Lease (`election`), probes to pod IPs (`podhosts`), health and metrics endpoints
(`endpoints`); `process` runs them. Called by `cli.operator`."""
