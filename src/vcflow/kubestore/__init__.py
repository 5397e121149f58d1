"""The Store over a Kubernetes API server: a `vcflow server` or a real cluster, through the
official `kubernetes` client."""
