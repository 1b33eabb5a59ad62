"""The rocketmq source when the cluster misbehaves: a deleted topic (failOnDataLoss) and a broker restart mid-stream."""

from __future__ import annotations

import shutil
import threading
from pathlib import Path
from typing import Any

import pytest

from tests.spark.support import Cluster, mqadmin, produce, start_cluster
from tests.spark.test_spark_source import Collector, _stream

pytestmark = pytest.mark.spark

FAST_RETRIES = {"fetchRetries": "2", "fetchRetryBackoffMs": "100"}


def test_deleted_topic_fails_with_fail_on_data_loss_and_is_skipped_without(
    spark: Any, cluster: Cluster, tmp_path: Path
) -> None:
    topic = "spark_deleted_topic"
    produce(cluster, topic, [f"a-{i}".encode() for i in range(100)])
    checkpoint = tmp_path / "ckpt"
    options = {"subscribe": topic, "startingOffsets": "earliest", **FAST_RETRIES}
    first = Collector()
    query = (
        _stream(spark, cluster, **options)
        .writeStream.foreachBatch(first)
        .option("checkpointLocation", str(checkpoint))
        .trigger(availableNow=True)
        .start()
    )
    assert query.awaitTermination(120) and query.exception() is None
    assert len(first.rows) == 100

    produce(cluster, topic, [f"b-{i}".encode() for i in range(50)])  # unread when the topic goes
    mqadmin(cluster, "deleteTopic", "-c", "SparkCluster", "-t", topic)
    lenient_checkpoint = tmp_path / "ckpt-lenient"
    shutil.copytree(checkpoint, lenient_checkpoint)

    strict = Collector()
    query = (
        _stream(spark, cluster, **options)
        .writeStream.foreachBatch(strict)
        .option("checkpointLocation", str(checkpoint))
        .trigger(availableNow=True)
        .start()
    )
    with pytest.raises(Exception, match="data loss") as info:
        query.awaitTermination(120)
    assert f"{topic}/" in str(info.value) and "no longer in the name server's route" in str(info.value)
    assert strict.rows == []

    lenient = Collector()
    query = (
        _stream(spark, cluster, **options, failOnDataLoss="false")
        .writeStream.foreachBatch(lenient)
        .option("checkpointLocation", str(lenient_checkpoint))
        .trigger(availableNow=True)
        .start()
    )
    assert query.awaitTermination(120) and query.exception() is None
    assert lenient.rows == []


def test_broker_restart_mid_stream_leaves_the_query_running(spark: Any, tmp_path: Path) -> None:
    own = start_cluster(tmp_path / "servers", broker_name="broker-r")
    restarts: list[threading.Thread] = []

    def restart_in_background() -> None:
        own.stop_broker()
        restarts.append(threading.Thread(target=own.start_broker, name="broker-restart"))
        restarts[-1].start()

    try:
        topic = "spark_broker_restart"
        sent = produce(own, topic, [f"r-{i}".encode() for i in range(160)])
        got = Collector()

        def each_batch(df: Any, batch_id: int) -> None:
            if batch_id == 1:
                # Executors: this batch's rows are pulled by df.collect() below, after the broker went away; the
                # tasks retry until it is back.
                restart_in_background()
            got(df, batch_id)
            if batch_id == 2:
                restarts[-1].join()
                # Driver: the next batch is planned (route and offset look-ups) while the broker restarts.
                restart_in_background()

        query = (
            _stream(spark, own, subscribe=topic, startingOffsets="earliest", maxOffsetsPerTrigger="50")
            .writeStream.foreachBatch(each_batch)
            .option("checkpointLocation", str(tmp_path / "ckpt"))
            .start()
        )
        try:
            query.processAllAvailable()
        finally:
            query.stop()
        assert query.exception() is None
        assert len(restarts) == 2
        assert sorted(body for _, _, body in got.rows) == sorted(sent)
        assert len({(q, o) for q, o, _ in got.rows}) == len(got.rows) == 160  # no gap, no duplicate
    finally:
        for t in restarts:
            t.join()
        own.stop()
