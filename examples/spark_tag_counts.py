"""Produce → Spark aggregation → back to RocketMQ: message counts per tag per minute.

    make run                                   # a name server on 127.0.0.1:9876 and a broker, in another terminal
    python examples/spark_tag_counts.py        # needs the [spark] extra and Java 17

1. Writes ``--messages`` orders with tags ``created``/``paid``/``shipped`` to topic ``--source`` (a batch
   ``df.write.format("rocketmq")``).
2. A streaming query reads ``--source`` with the ``rocketmq`` source, counts messages per tag per one-minute window
   of their store time, and writes every count to topic ``--target`` (the ``rocketmq`` sink, complete mode: each
   trigger re-sends the whole table, and counts only grow: the largest count sent for a key — ``<tag>@<minute>`` —
   is the current one).
   ``Trigger.AvailableNow`` processes what is there and stops; rerun the script and the checkpoint makes the query
   continue from where it stopped.
3. Reads ``--target`` back with ``spark.read`` and prints the latest count per tag and minute.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

from pyspark.sql import SparkSession
from pyspark.sql import functions as F

from spark_connector import register


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--namesrv", default="127.0.0.1:9876", help="name server address (default 127.0.0.1:9876)")
    p.add_argument("--source", default="orders", help="topic to produce to and aggregate")
    p.add_argument("--target", default="order-tag-counts", help="topic the counts are written to")
    p.add_argument("--messages", type=int, default=1000, help="messages to produce first (0 = none)")
    p.add_argument("--checkpoint", default=str(Path(tempfile.gettempdir()) / "rocketq-spark-tag-counts"))
    args = p.parse_args(argv)

    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    spark = (
        SparkSession.builder.master("local[2]")
        .appName("rocketmq-tag-counts")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("WARN")
    register(spark)

    # 1. produce: a DataFrame of orders, sent synchronously; save() returns once the broker stored every row.
    if args.messages:
        tags = F.element_at(
            F.array(F.lit("created"), F.lit("paid"), F.lit("shipped")), (F.col("id") % 3 + 1).cast("int")
        )
        orders = spark.range(args.messages).select(
            F.to_json(F.struct(F.col("id").alias("order"), (F.col("id") * 7 % 100).alias("amount"))).alias("body"),
            tags.alias("tags"),
            F.concat(F.lit("order-"), F.col("id").cast("string")).alias("keys"),
        )
        orders.write.format("rocketmq").option("namesrvAddr", args.namesrv).option("topic", args.source).mode(
            "append"
        ).save()
        print(f"produced {args.messages} messages to {args.source}")

    # 2. aggregate: counts per tag per minute, streamed back into RocketMQ.
    counts = (
        spark.readStream.format("rocketmq")
        .option("namesrvAddr", args.namesrv)
        .option("subscribe", args.source)
        .option("startingOffsets", "earliest")
        .option("maxOffsetsPerTrigger", "5000")
        .load()
        .groupBy(F.window("storeTimestamp", "1 minute").alias("w"), F.coalesce("tags", F.lit("-")).alias("tag"))
        .count()
    )
    minute = F.date_format("w.start", "yyyy-MM-dd'T'HH:mm")
    out = counts.select(
        F.to_json(F.struct(minute.alias("minute"), "tag", "count")).alias("body"),
        F.col("tag").alias("tags"),
        F.concat_ws("@", "tag", minute).alias("keys"),
    )
    query = (
        out.writeStream.format("rocketmq")
        .outputMode("complete")
        .option("namesrvAddr", args.namesrv)
        .option("topic", args.target)
        .option("checkpointLocation", args.checkpoint)
        .trigger(availableNow=True)
        .start()
    )
    query.awaitTermination()
    if query.exception() is not None:
        print(f"query failed: {query.exception()}", file=sys.stderr)
        return 1

    # 3. read the counts back: the largest count sent per tag and minute is the current one.
    written = spark.read.format("rocketmq").option("namesrvAddr", args.namesrv).option("subscribe", args.target).load()
    latest = (
        written.select(F.from_json(F.col("body").cast("string"), "minute string, tag string, count long").alias("c"))
        .groupBy("c.minute", "c.tag")
        .agg(F.max("c.count").alias("count"))
        .orderBy("minute", "tag")
    )
    latest.show(truncate=False)
    spark.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
