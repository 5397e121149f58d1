"""Tier 3, pure: controller decisions. Given objects and the time, say what to create,
delete and write; never touch a store, a process or a clock."""
