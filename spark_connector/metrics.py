"""Kafka-style lag figures for the ``rocketmq`` source, computed from a Spark query progress.

Python data sources cannot add custom metrics to ``sources[].metrics`` (Spark reads them only from JVM sources that
implement ``ReportsSourceMetrics``), so the source publishes the brokers' max offsets as ``sources[].latestOffset``
(``reportLatestOffset``) beside the batch's ``endOffset``. :func:`offsets_behind` turns that pair into the figures
Spark's Kafka source reports: ``minOffsetsBehindLatest``, ``maxOffsetsBehindLatest``, ``avgOffsetsBehindLatest``,
plus the per-queue numbers.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from spark_connector.offsets import OffsetFormatError, OffsetMap, from_json_dict


def _offsets(value: Any) -> OffsetMap | None:
    if value is None:
        return None
    try:
        data = json.loads(value) if isinstance(value, str) else value
        return from_json_dict(data)
    except (ValueError, OffsetFormatError):
        return None


def offsets_behind(progress: Mapping[str, Any]) -> dict[str, Any]:
    """Lag of the rocketmq sources of one progress (``query.lastProgress``, or one entry of its ``sources``).

    Returns ``{"minOffsetsBehindLatest": int, "maxOffsetsBehindLatest": int, "avgOffsetsBehindLatest": float,
    "perQueue": {"topic/broker/queueId": int}}``; all zeros and an empty ``perQueue`` when no source has offsets of
    this connector's shape yet (before the first batch). A queue missing from ``endOffset`` counts from offset 0.
    """
    sources = progress.get("sources", [progress])
    per_queue: dict[str, int] = {}
    for source in sources:
        latest, end = _offsets(source.get("latestOffset")), _offsets(source.get("endOffset"))
        if latest is None:
            continue
        end = end or {}
        for q in sorted(latest):
            per_queue[str(q)] = max(0, latest[q] - end.get(q, 0))
    values = list(per_queue.values())
    return {
        "minOffsetsBehindLatest": min(values, default=0),
        "maxOffsetsBehindLatest": max(values, default=0),
        "avgOffsetsBehindLatest": sum(values) / len(values) if values else 0.0,
        "perQueue": per_queue,
    }
