"""RpcStats: server-side request latency, counted per request into fixed histogram buckets (J 5.x
``rocketmq_rpc_latency``: buckets 1, 3, 5, 7, 10, 100, 1000, 2000, 3000 ms), keyed by request code, response code,
long polling and result. Plain integers only: a metrics exporter reads ``snapshot()`` at scrape time, so the
request path pays one dict lookup, one bisect and three increments, and no metrics library.

``result`` follows J's ``RemotingMetricsConstant``: ``success`` (a reply was written), ``oneway`` (no reply by
design), ``process_request_failed`` (the handler raised something else than a HandlerError),
``write_channel_failed`` (the connection closed before the reply could be written).
"""

from __future__ import annotations

from bisect import bisect_left
from typing import Final

RPC_LATENCY_BUCKETS_MS: Final = (1.0, 3.0, 5.0, 7.0, 10.0, 100.0, 1000.0, 2000.0, 3000.0)

RESULT_SUCCESS: Final = "success"
RESULT_ONEWAY: Final = "oneway"
RESULT_FAILED: Final = "process_request_failed"
RESULT_WRITE_FAILED: Final = "write_channel_failed"

# (request code, response code, is_long_polling, result)
RpcKey = tuple[int, int, bool, str]


class RpcStats:
    """Histogram counts per ``RpcKey``: ``[bucket_0 … bucket_n (+Inf), sum_ms]`` (non-cumulative buckets)."""

    __slots__ = ("_buckets", "_data")

    def __init__(self, buckets_ms: tuple[float, ...] = RPC_LATENCY_BUCKETS_MS) -> None:
        self._buckets = buckets_ms
        self._data: dict[RpcKey, list[float]] = {}

    @property
    def buckets_ms(self) -> tuple[float, ...]:
        return self._buckets

    def observe(self, code: int, response_code: int, long_polling: bool, result: str, elapsed_s: float) -> None:
        ms = elapsed_s * 1000.0
        key = (code, response_code, long_polling, result)
        row = self._data.get(key)
        if row is None:
            row = self._data[key] = [0.0] * (len(self._buckets) + 2)
        row[bisect_left(self._buckets, ms)] += 1
        row[-1] += ms

    def snapshot(self) -> list[tuple[RpcKey, list[float]]]:
        """Every key with a copy of its row (bucket counts, +Inf count, then the sum in ms)."""
        return [(k, list(v)) for k, v in self._data.items()]
