"""Driver planning and executor reading of the rocketmq source against fake client sessions (no SparkSession)."""

from __future__ import annotations

import concurrent.futures
import json
import pickle
from collections.abc import Iterable, Mapping
from typing import Any

import pytest

pytest.importorskip("pyspark")
pytest.importorskip("pyarrow")

from pyspark.sql.streaming.datasource import ReadAllAvailable, ReadMaxRows, ReadMinRows

from client.bulk import RawPullResult
from client.results import PullStatus
from protocol.record import encode_record
from spark_connector import _client, reader
from spark_connector.offsets import QueueKey, to_json_dict
from spark_connector.options import parse_source_options
from spark_connector.partitions import RocketMQPartition
from spark_connector.planning import DataLossError, QueueBounds, QueueRange
from spark_connector.reader import read_range
from spark_connector.source import RocketMQBatchReader, RocketMQStreamReader

A = [QueueKey("orders", "broker-a", i) for i in range(4)]
B = [QueueKey("orders-eu", "broker-b", i) for i in range(2)]


class FakeAdmin:
    """Route and offset answers from plain dicts; records commits."""

    def __init__(self, bounds: dict[QueueKey, QueueBounds]) -> None:
        self.bounds_by_queue = bounds
        self.commits: list[tuple[str, dict[QueueKey, int]]] = []
        self.fail_commit = False
        self.closed = False

    def topics(self) -> list[str]:
        return sorted({q.topic for q in self.bounds_by_queue} | {"other"})

    def queues(self, topic: str) -> list[QueueKey]:
        return sorted(q for q in self.bounds_by_queue if q.topic == topic)

    def bounds(self, queues: Iterable[QueueKey]) -> dict[QueueKey, QueueBounds]:
        return {q: self.bounds_by_queue[q] for q in queues}

    def search_offset(self, queue: QueueKey, timestamp_ms: int) -> int:
        return timestamp_ms // 1000  # message n was stored at n seconds

    def commit_offsets(self, group: str, offsets: Mapping[QueueKey, int]) -> None:
        if self.fail_commit:
            raise ConnectionError("broker down")
        self.commits.append((group, dict(offsets)))

    def close(self) -> None:
        self.closed = True


def stream(admin: FakeAdmin, **options: str) -> RocketMQStreamReader:
    raw = {"namesrvaddr": "127.0.0.1:9876", "subscribe": "orders", **{k.lower(): v for k, v in options.items()}}
    if "subscribepattern" in raw:
        del raw["subscribe"]
    r = RocketMQStreamReader(parse_source_options(raw, streaming=True))
    r._admin = admin  # type: ignore[assignment]
    return r


def bounds(maxes: Iterable[int], queues: list[QueueKey] = A, mins: Iterable[int] | None = None) -> dict:
    mins = list(mins) if mins is not None else [0] * len(queues)
    return {q: QueueBounds(lo, hi) for q, lo, hi in zip(queues, mins, maxes, strict=True)}


def flat(offsets: dict[str, Any]) -> dict[QueueKey, int]:
    return {QueueKey(t, b, int(q)): v for t, bs in offsets.items() for b, qs in bs.items() for q, v in qs.items()}


def test_initial_offset_is_resolved_once() -> None:
    admin = FakeAdmin(bounds([5, 6, 7, 8]))
    r = stream(admin)  # latest
    first = r.initialOffset()
    admin.bounds_by_queue = bounds([50, 60, 70, 80])
    assert r.initialOffset() == first == to_json_dict(dict(zip(A, [5, 6, 7, 8], strict=True)))
    assert json.dumps(first) == json.dumps(first, sort_keys=True)


@pytest.mark.parametrize(
    ("options", "expected"),
    [
        ({"startingOffsets": "earliest"}, [2, 0, 0, 0]),
        ({"startingOffsets": '{"orders": {"broker-a": {"0": 3, "1": -1, "2": -2}}}'}, [3, 9, 0, 0]),
        ({"startingTimestamp": "4500"}, [4, 4, 4, 4]),
        ({"startingTimestamp": "99000"}, [9, 9, 9, 9]),  # clamped to max
        ({"startingOffsetsByTimestamp": '{"orders": {"broker-a": {"1": 7000}}}'}, [2, 7, 0, 0]),
    ],
)
def test_starting_positions(options: dict[str, str], expected: list[int]) -> None:
    r = stream(FakeAdmin(bounds([9, 9, 9, 9], mins=[2, 0, 0, 0])), **options)
    assert flat(r.initialOffset()) == dict(zip(A, expected, strict=True))


def test_max_rows_batches_are_exact_and_canonical() -> None:
    r = stream(FakeAdmin(bounds([40, 30, 20, 10])), startingOffsets="earliest", maxOffsetsPerTrigger="30")
    assert r.getDefaultReadLimit() == ReadMaxRows(30)
    start = r.initialOffset()
    total = 0
    while True:
        end = r.latestOffset(start, r.getDefaultReadLimit())
        assert json.dumps(end) == json.dumps(end, sort_keys=True)
        n = sum(max(0, v - flat(start).get(q, 0)) for q, v in flat(end).items())
        if end == start:
            break
        assert n <= 30
        total += n
        start = end
    assert total == 100
    assert r.reportLatestOffset() == to_json_dict(dict(zip(A, [40, 30, 20, 10], strict=True)))


def test_read_all_available_ignores_the_cap() -> None:
    r = stream(FakeAdmin(bounds([40, 30, 20, 10])), startingOffsets="earliest", maxOffsetsPerTrigger="30")
    assert flat(r.latestOffset(r.initialOffset(), ReadAllAvailable())) == dict(zip(A, [40, 30, 20, 10], strict=True))


def test_min_rows_wait_for_rows_or_delay() -> None:
    admin = FakeAdmin(bounds([1, 1, 0, 0]))
    r = stream(admin, startingOffsets="earliest", minOffsetsPerTrigger="10", maxTriggerDelay="5s")
    now = [100.0]
    r._clock = lambda: now[0]
    assert r.getDefaultReadLimit() == ReadMinRows(10)
    start = r.initialOffset()
    assert r.latestOffset(start, ReadMinRows(10)) == start  # 2 < 10 waiting
    admin.bounds_by_queue = bounds([5, 4, 0, 0])
    now[0] = 104.0
    assert r.latestOffset(start, ReadMinRows(10)) == start  # 9 waiting
    admin.bounds_by_queue = bounds([5, 5, 0, 1])
    assert flat(r.latestOffset(start, ReadMinRows(10))) == dict(zip(A, [5, 5, 0, 1], strict=True))
    start = r.latestOffset(start, ReadAllAvailable())
    admin.bounds_by_queue = bounds([6, 5, 0, 1])
    now[0] = 108.0
    assert r.latestOffset(start, ReadMinRows(10)) == start  # 1 waiting, 4 s since the last batch
    now[0] = 109.5
    assert flat(r.latestOffset(start, ReadMinRows(10)))[A[0]] == 6  # the delay passed


def test_available_now_stops_at_the_target() -> None:
    admin = FakeAdmin(bounds([10, 10, 10, 10]))
    r = stream(admin, startingOffsets="earliest", maxOffsetsPerTrigger="25", minOffsetsPerTrigger="20")
    start = r.initialOffset()
    r.prepareForTriggerAvailableNow()
    admin.bounds_by_queue = bounds([50, 50, 50, 50], queues=A) | bounds([5, 5], queues=B)
    seen = 0
    while (end := r.latestOffset(start, ReadMaxRows(25))) != start:
        seen += sum(flat(end).values()) - sum(flat(start).values())
        start = end
    assert seen == 40 and set(flat(start).values()) == {10}  # min rows is not applied under AvailableNow


def test_new_queues_and_pattern_topics_join_at_zero() -> None:
    admin = FakeAdmin(bounds([3, 3, 3, 3]))
    r = stream(admin, subscribePattern="orders.*", startingOffsets="latest")
    start = r.initialOffset()
    admin.bounds_by_queue = bounds([3, 3, 3, 5]) | bounds([2, 4], queues=B)
    end = flat(r.latestOffset(start, ReadAllAvailable()))
    assert end == {A[0]: 3, A[1]: 3, A[2]: 3, A[3]: 5, B[0]: 2, B[1]: 4}
    parts = r.partitions(start, to_json_dict(end))
    assert [p.range for p in parts] == [  # type: ignore[attr-defined]
        QueueRange("orders", "broker-a", 3, 3, 5),
        QueueRange("orders-eu", "broker-b", 0, 0, 2),
        QueueRange("orders-eu", "broker-b", 1, 0, 4),
    ]


def test_data_loss_fails_or_resets() -> None:
    admin = FakeAdmin(bounds([10, 10, 10, 10], mins=[4, 0, 0, 0]))
    r = stream(admin, startingOffsets="earliest")
    start = to_json_dict({A[0]: 1, A[1]: 20, A[2]: 0, A[3]: 0})
    with pytest.raises(DataLossError) as info:
        r.latestOffset(start, ReadAllAvailable())
    assert "orders/broker-a/0: offsets [1, 4)" in str(info.value) and "failOnDataLoss" in str(info.value)
    assert "orders/broker-a/1: offsets [10, 20)" in str(info.value)

    lenient = stream(admin, startingOffsets="earliest", failOnDataLoss="false")
    end = flat(lenient.latestOffset(start, ReadAllAvailable()))
    assert end == {A[0]: 10, A[1]: 10, A[2]: 10, A[3]: 10}  # queue 1 reset to its max, queue 0 read (and skipped)


def test_commit_writes_group_offsets_best_effort() -> None:
    admin = FakeAdmin(bounds([1, 1, 1, 1]))
    stream(admin).commit(to_json_dict({A[0]: 7}))
    assert admin.commits == []  # no consumerGroup: nothing
    r = stream(admin, consumerGroup="lag-group")
    r.commit(to_json_dict({A[0]: 7}))
    assert admin.commits == [("lag-group", {A[0]: 7})]
    admin.fail_commit = True
    r.commit(to_json_dict({A[0]: 8}))  # swallowed, logged
    r.stop()
    assert admin.closed


def test_reader_pickles_without_its_session() -> None:
    r = stream(FakeAdmin(bounds([1, 1, 1, 1])), startingOffsets="earliest")
    r._admin = object()  # type: ignore[assignment]  # e.g. a live connection: must not travel to executors
    clone = pickle.loads(pickle.dumps(r))
    assert clone._admin is None and clone._opts == r._opts


def test_batch_reader_plans_start_to_end(monkeypatch: pytest.MonkeyPatch) -> None:
    admin = FakeAdmin(bounds([10, 10, 10, 10], mins=[0, 0, 0, 2]))
    monkeypatch.setattr(_client, "AdminSession", lambda addrs, timeout, credentials=None: admin)
    raw = {
        "namesrvaddr": "h:1",
        "subscribe": "orders",
        "startingoffsets": '{"orders": {"broker-a": {"0": 4}}}',
        "endingoffsets": '{"orders": {"broker-a": {"0": 6, "1": 3}}}',
        "maxrecordsperpartition": "4",
    }
    parts = RocketMQBatchReader(parse_source_options(raw, streaming=False)).partitions()
    ranges = [p.range for p in parts]  # type: ignore[attr-defined]
    assert sum(r.size for r in ranges) == 2 + 3 + 10 + 8
    assert all(r.size <= 4 for r in ranges)
    assert admin.closed


# -- executor side --------------------------------------------------------------------------------------------------
class FakeQueue:
    """A pull session over one queue whose offsets [min, max) hold messages (real encoded records); offsets in
    ``holes`` are missing. ``window`` answers as PullSession.window does, from a completed future."""

    def __init__(self, lo: int, hi: int, holes: frozenset[int] = frozenset()) -> None:
        self.lo, self.hi, self.holes = lo, hi, holes
        self.calls: list[tuple[int, int]] = []

    def pull(self, offset: int, max_nums: int) -> RawPullResult:
        self.calls.append((offset, max_nums))
        if offset < self.lo:
            return RawPullResult(PullStatus.OFFSET_ILLEGAL, self.lo, self.lo, self.hi)
        if offset >= self.hi:
            return RawPullResult(PullStatus.NO_NEW_MSG, offset, self.lo, self.hi)
        records = []
        o = offset
        while o < self.hi and len(records) < max_nums:
            if o not in self.holes:
                props = {"TAGS": "t", "MAX_OFFSET": "9", "UNIQ_KEY": f"id{o}"}
                records.append(bytes(encode_record(topic="orders", body=b"b%d" % o, properties=props, queue_offset=o)))
            o += 1
        return RawPullResult(PullStatus.FOUND, o, self.lo, self.hi, b"".join(records))

    def window(
        self, queue: QueueKey, start: int, end: int, max_nums: int, expression: str, backoff: list[float]
    ) -> concurrent.futures.Future[list[RawPullResult]]:
        replies = []
        cursor = start
        while cursor < end:
            res = self.pull(cursor, min(max_nums, end - cursor))
            replies.append(res)
            if res.status is not PullStatus.FOUND or res.next_begin_offset <= cursor:
                break
            cursor = res.next_begin_offset
        fut: concurrent.futures.Future[list[RawPullResult]] = concurrent.futures.Future()
        fut.set_result(replies)
        return fut


def read(fake: FakeQueue, r: QueueRange, monkeypatch: pytest.MonkeyPatch, **options: str) -> list[int]:
    monkeypatch.setattr(_client, "pull_session", lambda addrs, timeout, credentials=None: fake)
    monkeypatch.setattr(reader, "ROWS_PER_ARROW_BATCH", 7)
    raw = {"namesrvaddr": "h:1", "subscribe": "orders", **{k.lower(): v for k, v in options.items()}}
    batches = list(read_range(parse_source_options(raw, streaming=True), r))
    assert all(b.num_rows <= 7 + 5 for b in batches)
    return [o for b in batches for o in b.column("queueOffset").to_pylist()]


def test_read_range_exact_bounds(monkeypatch: pytest.MonkeyPatch) -> None:
    fake = FakeQueue(0, 100)
    assert read(fake, QueueRange("orders", "broker-a", 0, 10, 33), monkeypatch, pullBatchSize="5") == list(
        range(10, 33)
    )
    assert all(n <= 5 for _, n in fake.calls) and fake.calls[-1] == (30, 3)


def test_read_range_expired_start(monkeypatch: pytest.MonkeyPatch) -> None:
    r = QueueRange("orders", "broker-a", 0, 2, 12)
    with pytest.raises(DataLossError, match=r"orders/broker-a/0: offsets \[2, 5\) expired"):
        read(FakeQueue(5, 20), r, monkeypatch)
    assert read(FakeQueue(5, 20), r, monkeypatch, failOnDataLoss="false") == list(range(5, 12))


def test_read_range_missing_tail_and_holes(monkeypatch: pytest.MonkeyPatch) -> None:
    r = QueueRange("orders", "broker-a", 0, 0, 10)
    with pytest.raises(DataLossError, match=r"offsets \[6, 10\) are no longer on the broker"):
        read(FakeQueue(0, 6), r, monkeypatch)
    assert read(FakeQueue(0, 6), r, monkeypatch, failOnDataLoss="false") == list(range(6))
    holes = frozenset({3})
    with pytest.raises(DataLossError, match=r"offsets \[3, 4\) are missing"):
        read(FakeQueue(0, 10, holes), r, monkeypatch, pullBatchSize="3")
    assert 3 not in read(FakeQueue(0, 10, holes), r, monkeypatch, pullBatchSize="3", failOnDataLoss="false")


def test_partition_placeholder_reads_nothing() -> None:
    from pyspark.sql.datasource import InputPartition

    r = stream(FakeAdmin({}))
    assert list(r.read(InputPartition(None))) == []
    assert repr(RocketMQPartition(QueueRange("t", "b", 1, 2, 3))) == "RocketMQPartition(t/b/1[2, 3))"
