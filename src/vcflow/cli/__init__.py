"""Tier 9: the `vcflow` command line (typer). `entry.py` is the `vcflow` command, which
loads `app.py`: the root command and the one error boundary; each verb lives in its own
module; `manifests.py` turns `-f` paths into reviewed objects for every verb that reads
manifests."""
