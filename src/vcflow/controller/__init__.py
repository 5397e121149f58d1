"""Tier 4 shell: the JobFlow and JobTemplate controllers, their work queue and the manager
that feeds them store events. They meet the runtime only through the store."""
