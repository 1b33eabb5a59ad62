"""Consumers: push and pull consumers, rebalance, allocation strategies, offset stores (planned)."""
