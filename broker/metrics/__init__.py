"""The broker's built-in Prometheus metrics (J 5.x names, types, units, labels and buckets; docs/reference/metrics.md).

``collector`` turns the broker's own state (``BrokerStats`` counters, the store's runtime figures, the topic,
group, offset and client tables, ``RpcStats``) into metric families at scrape time; ``exporter`` owns the registry
and the ``/metrics`` ``/healthz`` ``/readyz`` endpoint and its start/stop. Nothing here runs per message.
"""
