"""Tier 2, pure: admission rules. Every `validate_*` returns all FieldErrors it finds (errors
and `warning=True` notes), never raises for bad input, and does no I/O."""
