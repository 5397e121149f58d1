"""Tier 5 wiring: the embedded mode as a library — a state directory, its store, the
controllers and the local runtime together (`vcflow run`'s engine, `vcflow.run()`)."""
