"""Tier 1, pure: a flow entry's `patch.jobSpec` over its template's spec (compatibility row 3)."""
