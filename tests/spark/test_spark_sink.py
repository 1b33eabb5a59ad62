"""The rocketmq sink: batch and streaming writes read back in full by a consumer, and errors that fail the batch."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from tests.spark.support import Cluster, consume_all, produce

pytestmark = pytest.mark.spark


def test_batch_write_is_read_back_in_full(spark: Any, cluster: Cluster) -> None:
    topic = "spark_sink_batch"
    rows = [
        (f"body-{i}", f"tag{i % 3}", [f"k{i}", f"kk{i}"] if i % 2 else None, {"n": str(i), "src": "spark"})
        for i in range(60)
    ]
    df = spark.createDataFrame(rows, "body string, tags string, keys array<string>, properties map<string,string>")
    df.repartition(3).write.format("rocketmq").option("namesrvAddr", cluster.namesrv_addr).option("topic", topic).mode(
        "append"
    ).save()

    got = consume_all(cluster, topic, expected=60)
    assert sorted(m.body for m in got) == sorted(f"body-{i}".encode() for i in range(60))
    by_body = {m.body.decode(): m for m in got}
    for body, tags, keys, props in rows:
        m = by_body[body]
        assert m.tags == tags
        assert m.keys == (" ".join(keys) if keys else None)
        assert {k: m.properties.get(k) for k in props} == props


def test_stream_source_to_sink(spark: Any, cluster: Cluster, tmp_path: Path) -> None:
    source, target = "spark_sink_src", "spark_sink_dst"
    sent = produce(cluster, source, [f"s-{i}".encode() for i in range(45)])
    stream = (
        spark.readStream.format("rocketmq")
        .option("namesrvAddr", cluster.namesrv_addr)
        .option("subscribe", source)
        .option("startingOffsets", "earliest")
        .option("maxOffsetsPerTrigger", "20")
        .option("consumerGroup", "spark_sink_lag")
        .load()
    )
    # The source's columns go straight into the sink: topic is overridden by the option, the rest is ignored.
    query = (
        stream.writeStream.format("rocketmq")
        .option("namesrvAddr", cluster.namesrv_addr)
        .option("topic", target)
        .option("checkpointLocation", str(tmp_path / "ckpt"))
        .trigger(availableNow=True)
        .start()
    )
    assert query.awaitTermination(120)
    assert query.exception() is None
    got = consume_all(cluster, target, expected=45)
    assert sorted(m.body for m in got) == sorted(sent)
    assert {m.tags for m in got} == {"tagA"}


def test_sink_rejects_bad_input(spark: Any, cluster: Cluster) -> None:
    df = spark.createDataFrame([("x", 1)], "body string, partition int")
    with pytest.raises(Exception, match="unexpected column"):
        df.write.format("rocketmq").option("namesrvAddr", cluster.namesrv_addr).option("topic", "t").mode(
            "append"
        ).save()
    with pytest.raises(Exception, match="no target topic"):
        df.select("body").write.format("rocketmq").option("namesrvAddr", cluster.namesrv_addr).mode("append").save()


def test_refused_send_fails_the_batch_with_the_brokers_reason(spark: Any, cluster: Cluster) -> None:
    # The broker's maxMessageSize is 256 KiB in this suite (conftest); 300 KiB is refused by the broker.
    # random bytes: the client zlib-compresses bodies over 4 KiB, so a repetitive body would shrink below the limit
    df = spark.createDataFrame([(os.urandom(300 * 1024),)], "body binary")
    with pytest.raises(Exception, match="sending to topic 'spark_sink_too_big' failed") as info:
        df.write.format("rocketmq").option("namesrvAddr", cluster.namesrv_addr).option(
            "topic", "spark_sink_too_big"
        ).mode("append").save()
    print(str(info.value)[:2000])


def test_queue_id_column_pins_the_queue(spark: Any, cluster: Cluster) -> None:
    topic = "spark_sink_queue_id"
    produce(cluster, topic, [b"create"])  # the topic exists (4 queues) before rows are pinned to one
    df = spark.createDataFrame([(f"q-{i}", 2 if i % 2 else 3) for i in range(40)], "body string, queueId int")
    df.repartition(2).write.format("rocketmq").option("namesrvAddr", cluster.namesrv_addr).option("topic", topic).mode(
        "append"
    ).save()
    rows = (
        spark.read.format("rocketmq")
        .option("namesrvAddr", cluster.namesrv_addr)
        .option("subscribe", topic)
        .load()
        .where("body != cast('create' as binary)")
        .select("body", "queueId")
        .collect()
    )
    assert sorted((bytes(r.body).decode(), r.queueId) for r in rows) == sorted(
        (f"q-{i}", 2 if i % 2 else 3) for i in range(40)
    )
    bad = spark.createDataFrame([("x", 99)], "body string, queueId int")
    with pytest.raises(Exception, match=f"topic '{topic}' has no queue 99"):
        bad.write.format("rocketmq").option("namesrvAddr", cluster.namesrv_addr).option("topic", topic).mode(
            "append"
        ).save()
