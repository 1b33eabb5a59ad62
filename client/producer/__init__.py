"""Producer: ``producer.Producer`` (send, send_oneway, send_batch, ordered sends, transactions) and ``selector``
(queue selection, latency fault avoidance)."""
