"""Pure micro-batch planning for the ``rocketmq`` source: admission control, data-loss checks and task ranges.

Everything here works on :data:`~spark_connector.offsets.OffsetMap` values (``{QueueKey: offset}``) and never talks
to a broker, so the driver-side reader (:mod:`spark_connector.source`) is a thin shell around these functions:

* :func:`next_end` — the end offset of the next batch from the batch start and the brokers' max offsets, optionally
  capped at ``maxOffsetsPerTrigger`` with a proportional split (largest remainder, so a batch holds *exactly* the cap
  whenever the backlog exceeds it, and no queue with backlog is starved for long).
* :class:`TriggerGate` — ``minOffsetsPerTrigger`` + ``maxTriggerDelay``: hold a batch back until enough offsets are
  waiting or the delay has passed. The clock is passed in, so tests need no sleeps.
* :func:`find_data_loss` — offsets that point below a queue's min offset (expired) or above its max (the queue was
  wiped or recreated).
* :func:`plan_ranges` — one ``[start, end)`` range per queue, split by ``maxRecordsPerPartition`` / ``minPartitions``.

A queue present in an end offset but missing from the start offset (a queue or topic that appeared between batches)
starts at offset 0: RocketMQ queue offsets begin at 0, so this is deterministic on replay, and if the queue's first
messages already expired the reader reports it as data loss — as Spark's Kafka source does for new partitions.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

from spark_connector.offsets import EARLIEST, LATEST, OffsetMap, QueueKey
from spark_connector.options import EndSpec, StartSpec


@dataclass(frozen=True, slots=True)
class QueueRange:
    """The offsets ``[start, end)`` of one queue that one Spark task reads."""

    topic: str
    broker: str
    queue_id: int
    start: int
    end: int

    @property
    def key(self) -> QueueKey:
        return QueueKey(self.topic, self.broker, self.queue_id)

    @property
    def size(self) -> int:
        return max(0, self.end - self.start)

    def __str__(self) -> str:
        return f"{self.topic}/{self.broker}/{self.queue_id}[{self.start}, {self.end})"


@dataclass(frozen=True, slots=True)
class QueueBounds:
    """A queue's ``minOffset`` (first offset still stored) and ``maxOffset`` (next offset to be written)."""

    min: int
    max: int


def backlog(start: Mapping[QueueKey, int], latest: Mapping[QueueKey, int]) -> int:
    """Offsets waiting between ``start`` and ``latest`` (queues missing from ``start`` count from 0)."""
    return sum(max(0, v - start.get(q, 0)) for q, v in latest.items())


def next_end(start: Mapping[QueueKey, int], latest: Mapping[QueueKey, int], max_rows: int | None = None) -> OffsetMap:
    """The end offset of the next batch.

    Every queue of ``start`` or ``latest`` is in the result. A queue only in ``start`` (no longer in the route, or
    not admitted under AvailableNow) keeps its offset; a queue whose latest is below its start keeps its start (see
    :func:`find_data_loss` for that case). With ``max_rows`` the total advance is at most ``max_rows``, shared in
    proportion to each queue's backlog; the remainder goes to the largest fractional shares (ties: larger backlog,
    then queue order), so the total is exactly ``max_rows`` when the backlog is larger.
    """
    end: OffsetMap = {q: v for q, v in start.items()}
    sizes: dict[QueueKey, int] = {}
    for q, v in latest.items():
        s = start.get(q, 0)
        end[q] = max(s, v) if q in start else v
        if v > s:
            sizes[q] = v - s
    total = sum(sizes.values())
    if max_rows is None or total <= max_rows:
        return end
    taken: dict[QueueKey, int] = {}
    remainders: list[tuple[int, int, QueueKey]] = []
    for q, size in sizes.items():
        share, rem = divmod(max_rows * size, total)
        taken[q] = share
        if rem:
            remainders.append((-rem, -size, q))
    leftover = max_rows - sum(taken.values())
    for _, _, q in sorted(remainders)[:leftover]:
        taken[q] += 1
    for q, take in taken.items():
        end[q] = start.get(q, 0) + take
    return end


def cap_at(latest: Mapping[QueueKey, int], target: Mapping[QueueKey, int]) -> OffsetMap:
    """``latest`` limited to the AvailableNow ``target``: queues absent from the target are left out (not read)."""
    return {q: min(v, target[q]) for q, v in latest.items() if q in target}


class TriggerGate:
    """``minOffsetsPerTrigger`` with ``maxTriggerDelay``: whether a batch may run now.

    A batch is admitted when at least ``min_rows`` offsets wait, or when some wait and ``max_delay_ms`` has passed
    since the last admitted batch (or since the gate first looked, for the first batch). Nothing waiting is never
    admitted. ``now_ms`` comes from the caller: a monotonic clock in the source, a plain number in tests.
    """

    def __init__(self, min_rows: int, max_delay_ms: int) -> None:
        self.min_rows = min_rows
        self.max_delay_ms = max_delay_ms
        self.last_trigger_ms: float | None = None

    def admit(self, available: int, now_ms: float) -> bool:
        if self.last_trigger_ms is None:
            self.last_trigger_ms = now_ms
        if available <= 0:
            return False
        if available >= self.min_rows or now_ms - self.last_trigger_ms >= self.max_delay_ms:
            self.last_trigger_ms = now_ms
            return True
        return False


@dataclass(frozen=True, slots=True)
class DataLoss:
    """Offsets that can no longer be read: ``[start, end)`` of a queue, and why."""

    queue: QueueKey
    start: int
    end: int
    reason: str

    def __str__(self) -> str:
        if self.end <= self.start:
            return f"{self.queue}: offsets from {self.start} on {self.reason}"
        return f"{self.queue}: offsets [{self.start}, {self.end}) {self.reason}"


def find_data_loss(start: Mapping[QueueKey, int], bounds: Mapping[QueueKey, QueueBounds]) -> list[DataLoss]:
    """Queues of ``bounds`` whose start offset (0 when missing) is below ``min`` or above ``max``."""
    out: list[DataLoss] = []
    for q in sorted(bounds):
        b = bounds[q]
        s = start.get(q, 0)
        if s < b.min:
            what = "expired before they were read" if q in start else "expired before the new queue was seen"
            out.append(DataLoss(q, s, b.min, f"{what} (the queue's min offset is {b.min})"))
        elif s > b.max:
            out.append(DataLoss(q, b.max, s, f"are beyond the queue's max offset {b.max}: it was reset or recreated"))
    return out


def _split(r: QueueRange, parts: int) -> list[QueueRange]:
    parts = max(1, min(parts, r.size))
    cuts = [r.start + r.size * i // parts for i in range(parts + 1)]
    return [QueueRange(r.topic, r.broker, r.queue_id, a, b) for a, b in itertools.pairwise(cuts) if b > a]


def plan_ranges(
    start: Mapping[QueueKey, int],
    end: Mapping[QueueKey, int],
    *,
    max_records: int | None = None,
    min_partitions: int | None = None,
) -> list[QueueRange]:
    """The task ranges of a batch: one per queue with ``end > start``, in queue order, then split.

    Ranges longer than ``max_records`` are cut into equal pieces of at most that size; then, if there are fewer than
    ``min_partitions`` ranges, each is cut into about ``size / (total / min_partitions)`` pieces (Spark Kafka's rule).
    """
    ranges = [
        QueueRange(q.topic, q.broker, q.queue_id, start.get(q, 0), e)
        for q, e in sorted(end.items())
        if e > start.get(q, 0)
    ]
    if max_records is not None:
        ranges = [piece for r in ranges for piece in _split(r, -(-r.size // max_records))]
    if min_partitions is not None and 0 < len(ranges) < min_partitions:
        ideal = sum(r.size for r in ranges) / min_partitions
        ranges = [piece for r in ranges for piece in _split(r, max(1, round(r.size / ideal)))]
    return ranges


class DataLossError(RuntimeError):
    """Offsets the query should read are gone (``failOnDataLoss=true``). The message names queues and ranges."""

    def __init__(self, losses: Iterable[DataLoss | str]) -> None:
        self.losses = list(losses)
        text = "; ".join(str(x) for x in self.losses)
        super().__init__(
            f"rocketmq source: data loss: {text}. Set the option failOnDataLoss=false to skip lost offsets"
            " with a warning instead of failing the query."
        )


def resolve_start(
    spec: StartSpec,
    bounds: Mapping[QueueKey, QueueBounds],
    search_offset: Callable[[QueueKey, int], int],
) -> OffsetMap:
    """The start offset of a new query for every queue of ``bounds`` (plus queues named in an offset JSON).

    ``earliest``/``latest`` are each queue's min/max offset; JSON sentinels -2/-1 the same; queues the JSON does not
    name start where ``spec.unlisted`` says (earliest, latest, or an :class:`UnlistedQueueError`). Timestamps go
    through ``search_offset(queue, ts_ms)`` (the broker's SEARCH_OFFSET_BY_TIMESTAMP) and are clamped to
    ``[min, max]``.
    """
    out: OffsetMap = {}
    unlisted = sorted(q for q in bounds if spec.kind in ("offsets", "timestamp") and q not in spec.offsets)
    if spec.timestamp is None and unlisted and spec.unlisted == "error":
        raise UnlistedQueueError(
            "rocketmq source: the starting offsets do not list "
            + ", ".join(str(q) for q in unlisted)
            + " (option startingOffsetsForUnlistedQueues=error)"
        )
    unlisted_start = LATEST if spec.unlisted == "latest" else EARLIEST
    for q, b in bounds.items():
        if spec.kind == "earliest":
            out[q] = b.min
        elif spec.kind == "latest":
            out[q] = b.max
        elif spec.kind == "offsets":
            v = spec.offsets.get(q, unlisted_start)
            out[q] = b.min if v == EARLIEST else b.max if v == LATEST else v
        else:
            ts = spec.timestamp if spec.timestamp is not None else spec.offsets.get(q)
            if ts is None:
                out[q] = b.max if unlisted_start == LATEST else b.min
            else:
                out[q] = min(max(search_offset(q, ts), b.min), b.max)
    if spec.kind == "offsets":
        for q, v in spec.offsets.items():
            if q not in out and v >= 0:
                out[q] = v
    return out


class UnlistedQueueError(ValueError):
    """``startingOffsetsForUnlistedQueues=error`` and the starting JSON does not name every queue."""


def resolve_end(
    spec: EndSpec,
    bounds: Mapping[QueueKey, QueueBounds],
    search_offset: Callable[[QueueKey, int], int] | None = None,
) -> OffsetMap:
    """The end offset of a batch query: each queue's max offset, the JSON value (-1 = max), or for a timestamp the
    first offset stored at or after it (``search_offset``; clamped to ``[min, max]``; unlisted queues: max)."""
    out = {q: b.max for q, b in bounds.items()}
    if spec.kind == "timestamp":
        assert search_offset is not None
        for q, b in bounds.items():
            ts = spec.timestamp if spec.timestamp is not None else spec.offsets.get(q)
            if ts is not None:
                out[q] = min(max(search_offset(q, ts), b.min), b.max)
    if spec.kind == "offsets":
        for q, v in spec.offsets.items():
            if v != LATEST:
                out[q] = v
    return out
