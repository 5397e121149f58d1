"""Tier 1, pure: a flow entry's `patch.jobSpec` over its template's spec (SEMANTICS row 3)."""
