"""Request handlers of the broker, one module per concern; each exposes ``table()`` (request code → handler)."""
