"""Source options and columns against a real broker: consumerGroup lag, bornHost, assign, subExpression, unlisted
queues, endingTimestamp."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from spark_connector.metrics import offsets_behind
from tests.spark.support import Cluster, group_offsets, produce, wait_for_clock_tick
from tests.spark.test_spark_source import Collector, _batch, _stream

pytestmark = pytest.mark.spark


def test_consumer_group_lag_reaches_zero_after_the_last_batch(spark: Any, cluster: Cluster, tmp_path: Path) -> None:
    topic, group = "spark_lag_zero", "spark_lag_zero_group"
    produce(cluster, topic, [f"l-{i}".encode() for i in range(90)])
    got = Collector()
    query = (
        _stream(
            spark, cluster, subscribe=topic, startingOffsets="earliest", maxOffsetsPerTrigger="40", consumerGroup=group
        )
        .writeStream.foreachBatch(got)
        .option("checkpointLocation", str(tmp_path / "ckpt"))
        .trigger(availableNow=True)
        .start()
    )
    assert query.awaitTermination(120) and query.exception() is None
    assert len(got.rows) == 90 and len([b for b in got.batches.values() if b]) == 3
    offsets = group_offsets(cluster, group, topic)
    assert offsets and all(committed == latest for committed, latest in offsets.values()), offsets
    lag = offsets_behind(query.lastProgress)
    assert lag["maxOffsetsBehindLatest"] == 0 and len(lag["perQueue"]) == len(offsets)


def test_born_host_is_ip_and_port(spark: Any, cluster: Cluster) -> None:
    topic = "spark_born_host"
    produce(cluster, topic, [b"h"] * 4)
    hosts = {r.bornHost for r in _batch(spark, cluster, subscribe=topic).select("bornHost").collect()}
    assert hosts and all(re.fullmatch(r"\d+\.\d+\.\d+\.\d+:\d+", h) for h in hosts), hosts


def test_assign_reads_only_the_assigned_queues(spark: Any, cluster: Cluster) -> None:
    topic = "spark_assign"
    produce(cluster, topic, [f"a-{i}".encode() for i in range(40)])
    per_queue = {
        r.queueId: r["count"] for r in _batch(spark, cluster, subscribe=topic).groupBy("queueId").count().collect()
    }
    assign = json.dumps({topic: {cluster.broker_name: [1, 3]}})
    rows = _batch(spark, cluster, assign=assign).select("queueId").collect()
    assert {r.queueId for r in rows} == {1, 3}
    assert len(rows) == per_queue[1] + per_queue[3]


def test_sub_expression_filters_by_tag(spark: Any, cluster: Cluster) -> None:
    topic = "spark_sub_expression"
    produce(cluster, topic, [f"a-{i}".encode() for i in range(15)], tags="tagA")
    b = produce(cluster, topic, [f"b-{i}".encode() for i in range(15)], tags="tagB")
    rows = _batch(spark, cluster, subscribe=topic, subExpression="tagB || tagC").select("body", "tags").collect()
    assert sorted(bytes(r.body) for r in rows) == sorted(b)
    assert {r.tags for r in rows} == {"tagB"}


def test_starting_offsets_for_unlisted_queues(spark: Any, cluster: Cluster) -> None:
    topic = "spark_unlisted"
    produce(cluster, topic, [f"u-{i}".encode() for i in range(40)])
    starting = json.dumps({topic: {cluster.broker_name: {"0": 1}}})
    rows = _batch(
        spark, cluster, subscribe=topic, startingOffsets=starting, startingOffsetsForUnlistedQueues="latest"
    ).collect()
    assert rows and {r.queueId for r in rows} == {0} and min(r.queueOffset for r in rows) == 1
    with pytest.raises(Exception, match=rf"do not list {topic}/{cluster.broker_name}/1"):
        _batch(
            spark, cluster, subscribe=topic, startingOffsets=starting, startingOffsetsForUnlistedQueues="error"
        ).collect()


def test_ending_timestamp(spark: Any, cluster: Cluster) -> None:
    topic = "spark_ending_ts"
    old = produce(cluster, topic, [f"old-{i}".encode() for i in range(12)])
    wait_for_clock_tick()
    produce(cluster, topic, [f"new-{i}".encode() for i in range(12)])
    rows = _batch(spark, cluster, subscribe=topic).select("body", "storeTimestamp").collect()
    ts_ms = min(int(r.storeTimestamp.timestamp() * 1000) for r in rows if bytes(r.body).startswith(b"new-"))
    bodies = [bytes(r.body) for r in _batch(spark, cluster, subscribe=topic, endingTimestamp=str(ts_ms)).collect()]
    assert sorted(bodies) == sorted(old)
    far = str(ts_ms + 3_600_000)  # after every message: the end is latest
    assert _batch(spark, cluster, subscribe=topic, endingTimestamp=far).count() == 24
