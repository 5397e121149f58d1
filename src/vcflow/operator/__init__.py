"""Tier 7, I/O: `vcflow operator`, the JobFlow and JobTemplate controllers of a Kubernetes
cluster over `kubestore.KubeStore`, with leader election on a Lease (`election`), a
namespace scope (`scope`), probes to pod IPs (`podhosts`), health and metrics endpoints
(`endpoints`); `process` runs them. Called by `cli.operator`."""
