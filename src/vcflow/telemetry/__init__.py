"""Tier 3: Prometheus metrics shared by the processes that run the controllers (`vcflow
server`, `vcflow operator`), so both expose the same series under the same names."""
