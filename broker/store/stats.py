"""Store-internal figures J keeps hidden, as plain counters the broker's metrics read at scrape time (the store
knows nothing of Prometheus): the group-commit size (puts released by one SYNC_FLUSH fsync) and the commit-log
fsync latency (both flush modes; measured around the sync call in the flush thread, only for syncs that advanced
the flushed offset).

``Histogram`` holds non-cumulative bucket counts (``counts[i]`` for values ≤ ``bounds[i]``, the last for +Inf)
and the sum; ``observe`` may run on the flush thread while the loop reads a snapshot: a reader can see a count
without its sum for one scrape, never a corrupted value.
"""

from __future__ import annotations

from bisect import bisect_left
from typing import Final

GROUP_COMMIT_SIZE_BUCKETS: Final = (1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0, 128.0, 256.0, 512.0)
FSYNC_LATENCY_BUCKETS_MS: Final = (0.5, 1.0, 2.0, 5.0, 10.0, 20.0, 50.0, 100.0, 200.0, 500.0, 1000.0)


class Histogram:
    __slots__ = ("bounds", "counts", "total")

    def __init__(self, bounds: tuple[float, ...]) -> None:
        self.bounds = bounds
        self.counts = [0] * (len(bounds) + 1)
        self.total = 0.0

    def observe(self, value: float) -> None:
        self.counts[bisect_left(self.bounds, value)] += 1
        self.total += value

    def snapshot(self) -> tuple[list[int], float]:
        return list(self.counts), self.total


class StoreStats:
    __slots__ = ("fsync_latency_ms", "group_commit_size")

    def __init__(self) -> None:
        self.group_commit_size = Histogram(GROUP_COMMIT_SIZE_BUCKETS)
        self.fsync_latency_ms = Histogram(FSYNC_LATENCY_BUCKETS_MS)
