"""The rocketmq streaming source and batch reader against a real name server and broker, in a local SparkSession."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.spark.support import Cluster, produce, wait_for_clock_tick

pytestmark = pytest.mark.spark


def _stream(spark: Any, cluster: Cluster, **options: str) -> Any:
    reader = spark.readStream.format("rocketmq").option("namesrvAddr", cluster.namesrv_addr)
    for k, v in options.items():
        reader = reader.option(k, v)
    return reader.load()


def _batch(spark: Any, cluster: Cluster, **options: str) -> Any:
    reader = spark.read.format("rocketmq").option("namesrvAddr", cluster.namesrv_addr)
    for k, v in options.items():
        reader = reader.option(k, v)
    return reader.load()


class Collector:
    """A foreachBatch sink that keeps every micro-batch's rows in the driver, keyed by batch id."""

    def __init__(self) -> None:
        self.batches: dict[int, list[tuple[int, int, bytes]]] = {}

    def __call__(self, df: Any, batch_id: int) -> None:
        rows = df.select("queueId", "queueOffset", "body").collect()
        self.batches[batch_id] = [(r.queueId, r.queueOffset, bytes(r.body)) for r in rows]

    @property
    def rows(self) -> list[tuple[int, int, bytes]]:
        return [row for b in sorted(self.batches) for row in self.batches[b]]


def test_stream_bounded_batches_restart_and_available_now(spark: Any, cluster: Cluster, tmp_path: Path) -> None:
    topic = "spark_stream_restart"
    first = produce(cluster, topic, [f"a-{i}".encode() for i in range(100)])
    checkpoint = str(tmp_path / "ckpt")
    options = {"subscribe": topic, "startingOffsets": "earliest", "maxOffsetsPerTrigger": "30"}

    # Run 1: an ordinary (processing-time) query drained with processAllAvailable(), then stopped.
    run1 = Collector()
    q = _stream(spark, cluster, **options).writeStream.foreachBatch(run1).option("checkpointLocation", checkpoint)
    query = q.start()
    try:
        query.processAllAvailable()
    finally:
        query.stop()
    assert query.exception() is None
    sizes = [len(run1.batches[b]) for b in sorted(run1.batches) if run1.batches[b]]
    assert sizes == [30, 30, 30, 10], sizes
    assert sorted(body for _, _, body in run1.rows) == sorted(first)
    assert len({(qid, off) for qid, off, _ in run1.rows}) == 100

    # Run 2: more messages, restart from the same checkpoint under availableNow: it resumes where run 1 stopped
    # and terminates on its own at the end of what was there when it started.
    second = produce(cluster, topic, [f"b-{i}".encode() for i in range(50)])
    run2 = Collector()
    query = (
        _stream(spark, cluster, **options)
        .writeStream.foreachBatch(run2)
        .option("checkpointLocation", checkpoint)
        .trigger(availableNow=True)
        .start()
    )
    assert query.awaitTermination(120), "availableNow did not stop"
    assert query.exception() is None
    assert min(run2.batches) > max(run1.batches)
    assert all(len(rows) <= 30 for rows in run2.batches.values())
    assert sorted(body for _, _, body in run2.rows) == sorted(second)
    both = run1.rows + run2.rows
    assert len({(qid, off) for qid, off, _ in both}) == len(both) == 150  # no duplicate, no gap
    progress = query.lastProgress["sources"][0]
    assert json.loads(progress["endOffset"]) == json.loads(progress["latestOffset"])


def test_starting_offsets_by_timestamp(spark: Any, cluster: Cluster) -> None:
    topic = "spark_by_timestamp"
    produce(cluster, topic, [f"old-{i}".encode() for i in range(12)])
    # The new messages are stored at least 1 ms after the old ones, no more: the source starts at the first message
    # stored at or after the time (what SEARCH_OFFSET_BY_TIMESTAMP answers since J 5.x; a 4.x broker answers the
    # NEARER neighbour, the earlier on a tie, and the source steps from there).
    wait_for_clock_tick()
    new = produce(cluster, topic, [f"new-{i}".encode() for i in range(12)])
    stored = _batch(spark, cluster, subscribe=topic).select("body", "storeTimestamp", "brokerName", "queueId")
    rows = stored.collect()
    # 1 ms after the last old message and at least 1 ms before the first new one
    ts_ms = max(int(r.storeTimestamp.timestamp() * 1000) for r in rows if bytes(r.body).startswith(b"old-")) + 1
    assert ts_ms < min(int(r.storeTimestamp.timestamp() * 1000) for r in rows if bytes(r.body).startswith(b"new-"))
    queues = sorted({(r.brokerName, r.queueId) for r in rows})
    by_ts: dict[str, dict[str, dict[str, int]]] = {topic: {}}
    for broker, qid in queues:
        by_ts[topic].setdefault(broker, {})[str(qid)] = ts_ms

    got = Collector()
    query = (
        _stream(spark, cluster, subscribe=topic, startingOffsetsByTimestamp=json.dumps(by_ts))
        .writeStream.foreachBatch(got)
        .trigger(availableNow=True)
        .start()
    )
    assert query.awaitTermination(120)
    assert query.exception() is None
    assert sorted(body for _, _, body in got.rows) == sorted(new)

    # The same through a batch read with one timestamp for every queue.
    bodies = [bytes(r.body) for r in _batch(spark, cluster, subscribe=topic, startingTimestamp=str(ts_ms)).collect()]
    assert sorted(bodies) == sorted(new)


def test_batch_read_with_ending_offsets(spark: Any, cluster: Cluster) -> None:
    topic = "spark_batch_ending"
    produce(cluster, topic, [f"m-{i}".encode() for i in range(40)])
    full = _batch(spark, cluster, subscribe=topic)
    assert full.count() == 40
    per_queue = {
        (r.brokerName, r.queueId): r.n
        for r in full.groupBy("brokerName", "queueId").count().withColumnRenamed("count", "n").collect()
    }
    (broker, qid), n = max(per_queue.items(), key=lambda kv: kv[1])
    assert n >= 3
    starting = {topic: {broker: {str(qid): 1}}}
    ending = {topic: {broker: {str(qid): n - 1}}}
    df = _batch(spark, cluster, subscribe=topic, startingOffsets=json.dumps(starting), endingOffsets=json.dumps(ending))
    # Queue (broker, qid) contributes [1, n-1); the other queues run from earliest to latest.
    assert df.count() == 40 - 2
    offsets = sorted(r.queueOffset for r in df.where(f"queueId = {qid}").collect())
    assert offsets == list(range(1, n - 1))
    # The fixed schema and its metadata columns.
    row = df.where(f"queueId = {qid}").orderBy("queueOffset").first()
    assert row.topic == topic and row.brokerName == broker and row.tags == "tagA" and row.keys.startswith("key-")
    assert row.properties.get("p") == "v" and row.msgId and row.bornHost and row.reconsumeTimes == 0


def test_bad_options_fail_with_a_clear_message(spark: Any, cluster: Cluster, tmp_path: Path) -> None:
    with pytest.raises(Exception, match="maxOffsetsPerTrigger"):  # typo: did you mean ...
        _stream(spark, cluster, subscribe="t", maxOffsetPerTrigger="10")
    with pytest.raises(Exception, match="subscribePattern"):
        _stream(spark, cluster, subscribe="t", subscribePattern="t.*")
    with pytest.raises(Exception, match="endingOffsets"):
        df = _stream(spark, cluster, subscribe="t", endingOffsets="latest")
        q = df.writeStream.format("memory").queryName("never").start()
        q.awaitTermination(60)
        raise AssertionError(f"query did not fail: {q.exception()}")
    with pytest.raises(Exception, match="namesrvAddr"):
        spark.range(1).selectExpr("cast(id as string) as body").write.format("rocketmq").option("topic", "t").mode(
            "append"
        ).save()


def test_data_loss_beyond_max_offset(spark: Any, cluster: Cluster) -> None:
    topic = "spark_data_loss"
    produce(cluster, topic, [b"x"] * 8)
    queues = _batch(spark, cluster, subscribe=topic).select("brokerName", "queueId").distinct().collect()
    broker, qid = queues[0].brokerName, queues[0].queueId
    beyond = json.dumps({topic: {broker: {str(qid): 10_000}}})
    query = (
        _stream(spark, cluster, subscribe=topic, startingOffsets=beyond)
        .writeStream.format("memory")
        .queryName("data_loss_fail")
        .trigger(availableNow=True)
        .start()
    )
    with pytest.raises(Exception, match="data loss") as info:
        query.awaitTermination(120)
    assert f"{topic}/{broker}/{qid}" in str(info.value) and "failOnDataLoss" in str(info.value)
