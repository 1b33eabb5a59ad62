"""Consumers: ``push.PushConsumer`` and ``pull.PullConsumer``, with ``rebalance`` (queue sharing in a group),
``allocate`` (strategies), ``consume`` (concurrent/orderly listener calls), ``process_queue`` and ``offset_store``."""
