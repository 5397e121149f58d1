"""Tier 0: vcflow's vocabulary — resource models, phases, names, loading, errors.

Nothing here imports another vcflow package; every other tier imports this one.
"""
