"""Tier 8: the web dashboard (issue 24): one page (`static/`) and its JSON, SSE and action
routes (`app`) over any Store — served by `vcflow server` at `/`, or by `vcflow dashboard`
over a cluster's Kubernetes API (`hosting`). The views (`views`, `detail`) are pure; the
routes, the event stream (`stream`) and the logs (`logs`) are the shell around them.

Submodules are imported one by one: `views` loads no web stack.
"""
