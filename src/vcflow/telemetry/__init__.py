"""Tier 5: what the processes that run the controllers (`vcflow server`, `vcflow operator`)
expose, shared by both: the Prometheus series under the same names (`controllers`); and the
bounds on a uvicorn server's client connections (`connections`). Who may reach the
endpoints is `serving.exposure`'s rule."""
