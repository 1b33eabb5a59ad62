"""Rows/s through the ``rocketmq`` Spark micro-batch source, for 1 KiB messages.

    python bench/spark_bench.py                      # starts its own name server + broker, 100k messages
    python bench/spark_bench.py --messages 20000     # quicker
    python bench/spark_bench.py --namesrv 127.0.0.1:9876   # against running servers

Produces ``--messages`` bodies of ``--size`` bytes to a fresh topic (4 queues) through the connector's producer
session, then runs ``spark.readStream.format("rocketmq")`` from earliest with ``Trigger.AvailableNow`` and
``maxOffsetsPerTrigger`` into Spark's ``noop`` sink, and reports:

* ``stream_rows_per_s``: messages / wall time of the whole query (planning, task launch, pulls, Arrow conversion);
* ``batch_rows_per_s``: the same messages through ``spark.read`` + ``noop`` (one Spark job, no micro-batches);
* the per-micro-batch ``processedRowsPerSecond`` Spark reports.

Everything — Spark's JVM, its Python workers, the broker and the name server — shares this machine's cores, so the
figure is a floor for a real cluster. Needs the [spark] extra and Java 17; prints one JSON line at the end.
"""

from __future__ import annotations

import argparse
import json
import os
import queue
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _start(args: list[str], ready: str, log_path: Path) -> subprocess.Popen[str]:
    proc = subprocess.Popen(
        [sys.executable, "-m", *args], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    lines: queue.Queue[str | None] = queue.Queue()

    def pump() -> None:
        assert proc.stdout is not None
        with open(log_path, "w") as log:
            for line in proc.stdout:
                log.write(line)
                lines.put(line)
        lines.put(None)

    threading.Thread(target=pump, daemon=True).start()
    while True:
        line = lines.get(timeout=60)
        if line is None:
            raise RuntimeError(f"{args[0]} exited with {proc.wait()}; see {log_path}")
        if ready in line:
            return proc


@contextmanager
def servers(work: Path) -> Iterator[str]:
    """A name server and a broker in subprocesses on free ports; yields the name server address."""
    ns_port, broker_port = _free_port(), _free_port()
    (work / "namesrv.conf").write_text(
        f"listenPort={ns_port}\nlistenAddress=127.0.0.1\nkvConfigPath={work}/kv.json\n"
        f"configStorePath={work}/namesrv.properties\n"
    )
    (work / "broker.conf").write_text(
        f"brokerIP1=127.0.0.1\nbindAddress=127.0.0.1\nlistenPort={broker_port}\nstorePathRootDir={work}/store\n"
        "mappedFileSizeCommitLog=268435456\nautoCreateTopicEnable=true\ndefaultTopicQueueNums=4\n"
        "maxTransferCountOnMessageInMemory=1024\nmaxTransferBytesOnMessageInMemory=8388608\n"
    )
    procs = [_start(["namesrv", "-c", str(work / "namesrv.conf")], "boot success", work / "namesrv.log")]
    try:
        ns = f"127.0.0.1:{ns_port}"
        procs.append(_start(["broker", "-n", ns, "-c", str(work / "broker.conf")], "boot success", work / "broker.log"))
        yield ns
    finally:
        for p in reversed(procs):
            p.terminate()
            try:
                p.wait(15)
            except subprocess.TimeoutExpired:
                p.kill()


def produce(namesrv: str, topic: str, n: int, size: int) -> float:
    from spark_connector import _client

    session = _client.producer_session([namesrv], "spark-bench-producer", 10_000)
    body = os.urandom(size // 2).hex().encode()[:size]
    t0 = time.perf_counter()
    sent = session.send_all(_client.OutgoingMessage(topic, body, "bench", None, None) for _ in range(n))
    assert sent == n
    return time.perf_counter() - t0


def run(namesrv: str, args: argparse.Namespace, work: Path) -> dict[str, object]:
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    os.environ["PYSPARK_PYTHON"] = sys.executable
    os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
    from pyspark.sql import SparkSession

    from spark_connector import register

    topic = f"spark_bench_{int(time.time())}"
    produce_s = produce(namesrv, topic, args.messages, args.size)
    produce(namesrv, topic + "_warm", 100, args.size)

    spark = (
        SparkSession.builder.master("local[2]")
        .appName("rocketmq-spark-bench")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.driver.memory", "2g")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    register(spark)
    common = {"namesrvAddr": namesrv, "subscribe": topic, "pullBatchSize": str(args.pull_batch_size)}

    # Warm-up on a small topic: Spark's Python workers start once, so both measurements see warm workers.
    spark.read.format("rocketmq").options(**{**common, "subscribe": topic + "_warm"}).load().count()

    t0 = time.perf_counter()
    query = (
        spark.readStream.format("rocketmq")
        .options(**common, startingOffsets="earliest", maxOffsetsPerTrigger=str(args.max_offsets_per_trigger))
        .load()
        .writeStream.format("noop")
        .option("checkpointLocation", str(work / "ckpt"))
        .trigger(availableNow=True)
        .start()
    )
    query.awaitTermination()
    stream_s = time.perf_counter() - t0
    if query.exception() is not None:
        raise RuntimeError(f"query failed: {query.exception()}")
    batches = [p for p in query.recentProgress if p["numInputRows"]]
    rows = sum(p["numInputRows"] for p in batches)

    t0 = time.perf_counter()
    spark.read.format("rocketmq").options(**common).load().write.format("noop").mode("overwrite").save()
    batch_s = time.perf_counter() - t0
    spark.stop()
    return {
        "messages": args.messages,
        "size": args.size,
        "rows_read": rows,
        "micro_batches": len(batches),
        "max_offsets_per_trigger": args.max_offsets_per_trigger,
        "pull_batch_size": args.pull_batch_size,
        "produce_msgs_per_s": round(args.messages / produce_s),
        "stream_rows_per_s": round(rows / stream_s),
        "stream_s": round(stream_s, 2),
        "batch_rows_per_s": round(args.messages / batch_s),
        "spark_processed_rows_per_s": [round(p["processedRowsPerSecond"]) for p in batches],
    }


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--namesrv", help="use running servers instead of starting a name server and a broker")
    p.add_argument("--messages", type=int, default=100_000)
    p.add_argument("--size", type=int, default=1024)
    p.add_argument("--max-offsets-per-trigger", type=int, default=50_000)
    p.add_argument("--pull-batch-size", type=int, default=256)
    args = p.parse_args(argv)
    try:
        import pyspark  # noqa: F401
    except ImportError:
        print("spark_bench: pyspark is not installed (pip install -e '.[spark]'); skipped")
        return 0
    with tempfile.TemporaryDirectory(prefix="spark-bench-") as tmp:
        work = Path(tmp)
        if args.namesrv:
            result = run(args.namesrv, args, work)
        else:
            with servers(work) as ns:
                result = run(ns, args, work)
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
