"""Tier 5: what the processes that run the controllers (`vcflow server`, `vcflow operator`)
expose, shared by both: the Prometheus series under the same names (`controllers`), and the
rule for who may reach their endpoints (`exposure`)."""
