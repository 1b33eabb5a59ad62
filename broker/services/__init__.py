"""Stateful broker collaborators (tables, registries, background tasks), injected into handlers one by one."""
