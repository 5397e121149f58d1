"""Tier 1, pure: the graph of a flow's entries — duplicates, unknown targets, cycle paths,
topological order and counted readiness."""
