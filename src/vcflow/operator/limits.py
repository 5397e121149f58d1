"""The operator's defaults for how hard it works the API server: its client's rate limit and
how long its status writes wait to carry more than one change. Apart from `process` so
that `vcflow operator --help` shows them without importing the operator."""

from __future__ import annotations

#: the client's limit (`--kube-api-qps`, `--kube-api-burst`): it is what caps a burst of
#: flows, each a few requests (docs/operator.md, Figures, has what it gives); the API
#: server's Priority and Fairness shares its capacity out beyond that
DEFAULT_QPS = 100.0
DEFAULT_BURST = 200
#: seconds a flow's new phase waits to be written: a flow whose jobs end quickly gets one
#: status write for several changes (`ControllerOptions.phase_interval`)
PHASE_INTERVAL = 0.2
#: seconds a template's `jobDependsOnList` waits: one write for a burst of its vcjobs
TEMPLATE_DELAY = 1.0
