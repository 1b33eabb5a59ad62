"""The rocketq client SDK: asyncio producer, push and pull consumers, rebalancing and offset stores (planned)."""
