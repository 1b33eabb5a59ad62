"""A Spark driver in its own process, for the standalone-cluster test: it can be SIGKILLed and started again.

    python -m tests.spark.cluster_driver --master spark://127.0.0.1:7077 --namesrv 127.0.0.1:9876 --topic T \\
        --group G --checkpoint DIR --out DIR [--max-per-trigger 200] [--available-now]

Runs ``readStream.format("rocketmq")`` (the given topic from earliest, ``consumerGroup`` G) into a ``foreachBatch``
sink that writes each micro-batch as ``out/batch-<id>.json`` (a JSON list of ``[brokerName, queueId, queueOffset,
body]``), atomically (temporary file + rename): a batch Spark replays after a crash rewrites the same file with the
same rows, so the files together are the query's exactly-once output. Prints ``batch <id> rows <n>`` per batch.
Without ``--available-now`` the query runs until the process is killed; with it, the query reads what is there and
the process exits 0.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

from tests.spark.standalone import executor_conf


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--master", required=True)
    p.add_argument("--namesrv", required=True)
    p.add_argument("--topic", required=True)
    p.add_argument("--group", required=True)
    p.add_argument("--checkpoint", required=True)
    p.add_argument("--out", required=True, type=Path)
    p.add_argument("--max-per-trigger", default="200")
    p.add_argument("--available-now", action="store_true")
    args = p.parse_args()
    os.environ["PYSPARK_PYTHON"] = os.environ["PYSPARK_DRIVER_PYTHON"] = sys.executable
    from pyspark.sql import SparkSession

    from spark_connector import register

    builder = SparkSession.builder.master(args.master).appName("rocketq-cluster-test")
    for key, value in {**executor_conf(sys.executable), "spark.ui.showConsoleProgress": "false"}.items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    register(spark)
    out: Path = args.out
    out.mkdir(parents=True, exist_ok=True)

    def write_batch(df: Any, batch_id: int) -> None:
        rows = df.select("brokerName", "queueId", "queueOffset", "body").collect()
        data = [[r.brokerName, r.queueId, r.queueOffset, bytes(r.body).decode()] for r in rows]
        tmp = out / f".batch-{batch_id}.tmp"
        tmp.write_text(json.dumps(data))
        os.replace(tmp, out / f"batch-{batch_id:05d}.json")
        print(f"batch {batch_id} rows {len(data)}", flush=True)

    writer = (
        spark.readStream.format("rocketmq")
        .option("namesrvAddr", args.namesrv)
        .option("subscribe", args.topic)
        .option("startingOffsets", "earliest")
        .option("maxOffsetsPerTrigger", args.max_per_trigger)
        .option("consumerGroup", args.group)
        .load()
        .writeStream.foreachBatch(write_batch)
        .option("checkpointLocation", args.checkpoint)
    )
    if args.available_now:
        writer = writer.trigger(availableNow=True)
    query = writer.start()
    query.awaitTermination()
    failure = query.exception()
    spark.stop()
    if failure is not None:
        print(f"query failed: {failure}", file=sys.stderr, flush=True)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
