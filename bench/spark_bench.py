"""Rows/s through the ``rocketmq`` Spark source (streaming and batch) and sink, beside the API's in-memory ceiling.

    python bench/spark_bench.py                      # starts its own name server + broker, 100k messages
    python bench/spark_bench.py --messages 20000     # quicker
    python bench/spark_bench.py --namesrv 127.0.0.1:9876   # against running servers
    python bench/spark_bench.py --rounds 3           # alternate connector and ceiling runs, report medians
    python bench/spark_bench.py --cluster            # the same cases on a standalone cluster too, same run

Produces ``--messages`` bodies of ``--size`` bytes to a fresh topic (4 queues), then, in one SparkSession, measures
each path against a ceiling written on the very same Python Data Source API classes the connector uses, doing no I/O
and no decoding — the most a Python data source can do on this machine, and so the connector's ceiling:

The source reads with ``pullBatchSize=1024`` (``--pull-batch-size``), the tuning the README gives for Spark reads:
the broker started here allows 1,024 messages and 8 MiB per pull, so each reply's fixed decoding cost is spread over
1,024 rows (the connector's default, 256, suits brokers left at RocketMQ's caps of 32 messages / 256 KiB).

* ``stream``: ``readStream`` from earliest, ``Trigger.AvailableNow`` + ``maxOffsetsPerTrigger`` into ``noop``. Ceiling:
  a ``DataSourceStreamReader`` (+ ``SupportsTriggerAvailableNow``, ``latestOffset(start, limit)`` and
  ``ReadMaxRows`` as the connector has them, so both run the same micro-batches) whose ``read`` yields pre-built
  ``pyarrow.RecordBatch``es of the source schema (4,096 rows each, ``--size``-byte bodies, a two-entry properties
  map), 4 partitions;
* ``batch``: ``spark.read`` + ``noop`` (one job). Ceiling: a ``DataSourceReader`` yielding the same batches, 4
  partitions;
* ``sink``: ``--messages`` rows (``body`` of ``--size`` bytes, 4 partitions, cached) written with
  ``df.write.format(...)``. Ceiling: a ``DataSourceArrowWriter`` (the connector's sink class too) whose ``write``
  counts the rows of the Arrow batches Spark hands it and drops them.

So the ratio is what the connector costs on top of Spark's own work for a Python data source of that shape: pulling
and decoding (source), encoding and sending (sink), and the CPU the broker and the name server take from the same
cores.

Rows/s = rows / wall time of the whole query. Runs alternate (connector, ceiling, connector, ...) so load from other
processes hits both; the medians and their ratio are printed. With ``--cluster`` every case runs again (same topic,
same ceiling classes) on a Spark standalone cluster started here (``tests.spark.standalone``: a master and two
workers of 1 core, executors in their own JVMs with their own Python workers), reported under ``cluster_*`` keys.
Everything — Spark's JVM, its Python workers, the broker and the name server — shares this machine's cores, so the
figures are a floor for a real cluster; "servers' CPU" is what the name server and the broker used meanwhile (in
cores), CPU the connector's runs lose to them and the ceiling's do not; "Spark's CPU" is the CPU (µs per row) that
this process and its descendants but the servers (Spark's JVM and Python workers) used in the connector's and the
ceiling's runs: on a shared machine it moves far less than rows/s. Needs the [spark] extra and Java 17; prints
one JSON line at the end.
"""

from __future__ import annotations

import argparse
import json
import os
import queue
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

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
def servers(work: Path) -> Iterator[tuple[str, list[int]]]:
    """A name server and a broker in subprocesses on free ports; yields the name server address and their pids."""
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
        yield ns, [p.pid for p in procs]
    finally:
        for p in reversed(procs):
            p.terminate()
            try:
                p.wait(15)
            except subprocess.TimeoutExpired:
                p.kill()


def produce(namesrv: str, topic: str, n: int, size: int) -> float:
    from spark_connector import _client
    from spark_connector.options import parse_sink_options
    from spark_connector.sink import batches

    # The SDK's batch send (SEND_BATCH_MESSAGE, 8 in flight) with the sink's default batch limits, outside Spark:
    # what the broker takes at most, the reference for the sink's figure.
    opts = parse_sink_options({"namesrvAddr": namesrv, "topic": topic})
    session = _client.producer_session([namesrv], "spark-bench-producer", 10_000)
    body = os.urandom(size // 2).hex().encode()[:size]
    t0 = time.perf_counter()
    messages = (_client.OutgoingMessage(topic, body, "bench", None, None) for _ in range(n))
    sent = session.send_batches(batches(messages, opts), opts.sends_in_flight)
    assert sent == n
    return time.perf_counter() - t0


def _ceiling_classes(size: int) -> tuple[type, type]:
    """The in-memory source and sink (defined here so cloudpickle ships them to the workers by value)."""
    import pyarrow as pa
    from pyspark.sql.datasource import (
        DataSource,
        DataSourceArrowWriter,
        DataSourceReader,
        DataSourceStreamReader,
        InputPartition,
        WriterCommitMessage,
    )
    from pyspark.sql.streaming.datasource import ReadLimit, ReadMaxRows, SupportsTriggerAvailableNow

    from spark_connector.schema import arrow_schema, read_schema

    class Part(InputPartition):
        def __init__(self, rows: int) -> None:
            super().__init__(rows)
            self.rows = rows

    def batches(rows: int) -> Any:
        n = 4096
        ts = pa.array([1_700_000_000_000_000] * n, pa.timestamp("us", tz="UTC"))
        props = pa.array([[("UNIQ_KEY", "x" * 32), ("p", "v")]] * n, pa.map_(pa.string(), pa.string()))
        full = pa.RecordBatch.from_arrays(
            [
                pa.array(["t"] * n),
                pa.array(["broker-a"] * n),
                pa.array([0] * n, pa.int32()),
                pa.array(range(n), pa.int64()),
                pa.array(["m" * 32] * n),
                pa.array([None] * n, pa.string()),
                pa.array(["bench"] * n),
                pa.array([b"x" * size] * n, pa.binary()),
                props,
                ts,
                ts,
                pa.array(["127.0.0.1:1"] * n),
                pa.array([0] * n, pa.int32()),
            ],
            schema=arrow_schema(True),
        )
        while rows > 0:
            yield full.slice(0, min(n, rows))
            rows -= n

    class StreamReader(DataSourceStreamReader, SupportsTriggerAvailableNow):
        """Admission control and AvailableNow as the connector has them, so both run the same micro-batches."""

        def __init__(self, total: int, per_trigger: int) -> None:
            self.total, self.per_trigger = total, per_trigger

        def initialOffset(self) -> dict[str, int]:
            return {"n": 0}

        def getDefaultReadLimit(self) -> ReadLimit:
            return ReadMaxRows(self.per_trigger)

        def latestOffset(self, start: dict[str, int], limit: ReadLimit) -> dict[str, int]:
            cap = limit.max_rows if isinstance(limit, ReadMaxRows) else self.total
            return {"n": min(self.total, start["n"] + cap)}

        def prepareForTriggerAvailableNow(self) -> None:
            pass

        def partitions(self, start: dict[str, int], end: dict[str, int]) -> list[InputPartition]:
            rows = end["n"] - start["n"]
            return [Part(rows // 4 + (1 if i < rows % 4 else 0)) for i in range(4)]

        def read(self, partition: Any) -> Any:
            return batches(partition.rows)

    class BatchReader(DataSourceReader):
        def __init__(self, total: int) -> None:
            self.total = total

        def partitions(self) -> list[InputPartition]:
            return [Part(self.total // 4 + (1 if i < self.total % 4 else 0)) for i in range(4)]

        def read(self, partition: Any) -> Any:
            return batches(partition.rows)

    class Done(WriterCommitMessage):
        def __init__(self, rows: int) -> None:
            self.rows = rows

    class Writer(DataSourceArrowWriter):
        def write(self, iterator: Any) -> Any:
            return Done(sum(b.num_rows for b in iterator))

    class CeilingSource(DataSource):
        @classmethod
        def name(cls) -> str:
            return "arrowceiling"

        def schema(self) -> Any:
            return read_schema(True)

        def reader(self, schema: Any) -> Any:
            return BatchReader(int(self.options["rows"]))

        def streamReader(self, schema: Any) -> Any:
            return StreamReader(int(self.options["rows"]), int(self.options["pertrigger"]))

        def writer(self, schema: Any, overwrite: bool) -> Any:
            return Writer()

    return CeilingSource, Writer


def _timed(fn: Any) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def _median(xs: list[float]) -> float:
    return statistics.median(xs)


def _spark_cpu_seconds(exclude: list[int]) -> float:
    """CPU seconds used so far by this process and its descendants (Spark's JVM, its Python workers, a standalone
    cluster's processes), less the ``exclude`` processes' subtrees (the servers): Linux ``/proc`` only, else 0. Each
    process counts with its reaped children (``/proc/PID/stat`` utime, stime, cutime, cstime), so a Python worker
    that ended between two readings is still counted, in its parent."""
    stats: dict[int, list[str]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stats[int(entry.name)] = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except (OSError, IndexError):
                continue  # ended meanwhile
    children: dict[int, list[int]] = {}
    for pid, fields in stats.items():
        children.setdefault(int(fields[1]), []).append(pid)
    ticks, todo = 0, [os.getpid()]
    while todo:
        pid = todo.pop()
        if pid in exclude or pid not in stats:
            continue
        ticks += sum(int(f) for f in stats[pid][11:15])
        todo += children.get(pid, [])
    return ticks / os.sysconf("SC_CLK_TCK")


def run(namesrv: str, args: argparse.Namespace, work: Path, server_pids: list[int]) -> dict[str, object]:
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    os.environ["PYSPARK_PYTHON"] = sys.executable
    os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
    os.environ["PYSPARK_DRIVER_PYTHON"] = sys.executable
    from pyspark.sql import SparkSession

    topic = f"spark_bench_{int(time.time())}"
    produce_s = produce(namesrv, topic, args.messages, args.size)
    produce(namesrv, topic + "_warm", 100, args.size)
    result: dict[str, object] = {
        "messages": args.messages,
        "size": args.size,
        "rounds": args.rounds,
        "max_offsets_per_trigger": args.max_offsets_per_trigger,
        "pull_batch_size": args.pull_batch_size,
        "sdk_batch_send_msgs_per_s": round(args.messages / produce_s),
    }
    local = (
        SparkSession.builder.master("local[2]")
        .appName("rocketmq-spark-bench")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.driver.memory", "2g")
        .config("spark.ui.showConsoleProgress", "false")
        .getOrCreate()
    )
    print("local[2]", flush=True)
    result.update(measure(local, namesrv, topic, args, work / "local", "", server_pids))
    local.stop()
    if args.cluster:
        from tests.spark.standalone import Standalone, executor_conf

        with Standalone(work / "standalone", workers=2, cores=1, memory="1536m") as cluster:
            builder = SparkSession.builder.master(cluster.url).appName("rocketmq-spark-bench-cluster")
            for key, value in {**executor_conf(sys.executable, "1g"), "spark.ui.showConsoleProgress": "false"}.items():
                builder = builder.config(key, value)
            on_cluster = builder.getOrCreate()
            print(f"standalone cluster {cluster.url} (2 workers x 1 core, executors in their own JVMs)", flush=True)
            result.update(measure(on_cluster, namesrv, topic, args, work / "cluster", "cluster_", server_pids))
            on_cluster.stop()
    return result


def measure(
    spark: Any, namesrv: str, topic: str, args: argparse.Namespace, work: Path, prefix: str, server_pids: list[int]
) -> dict[str, object]:
    """The three cases (connector vs ceiling, ``--rounds`` alternating runs) in ``spark``; keys start with ``prefix``.
    With ``server_pids`` (servers started here), the CPU the name server and the broker used during the connector's
    runs is reported in cores (CPU seconds per wall second): on this one machine that CPU is taken from Spark, which the
    ceiling (no I/O) does not pay."""
    from pyspark.sql import functions as F

    from bench._util import cpu_seconds
    from spark_connector import register

    spark.sparkContext.setLogLevel("ERROR")
    register(spark)
    ceiling, _ = _ceiling_classes(args.size)
    spark.dataSource.register(ceiling)
    n = args.messages
    common = {"namesrvAddr": namesrv, "subscribe": topic, "pullBatchSize": str(args.pull_batch_size)}
    ceil_opts = {"rows": str(n), "pertrigger": str(args.max_offsets_per_trigger)}

    # Warm-up: Spark's Python workers start once, so every measurement sees warm workers.
    spark.read.format("rocketmq").options(**{**common, "subscribe": topic + "_warm"}).load().count()
    spark.read.format("arrowceiling").options(rows="1000", pertrigger="1000").load().count()

    runs = {"stream": 0}
    durations: dict[str, list[dict[str, int]]] = {}

    def stream(fmt: str, options: dict[str, str]) -> None:
        runs["stream"] += 1
        query = (
            spark.readStream.format(fmt)
            .options(**options)
            .load()
            .writeStream.format("noop")
            .option("checkpointLocation", str(work / f"ckpt-{runs['stream']}"))
            .trigger(availableNow=True)
            .start()
        )
        query.awaitTermination()
        if query.exception() is not None:
            raise RuntimeError(f"query failed: {query.exception()}")
        rows = sum(p["numInputRows"] for p in query.recentProgress)
        assert rows == n, (fmt, rows)
        durations[fmt] = [p["durationMs"] for p in query.recentProgress if p["numInputRows"]]

    def batch(fmt: str, options: dict[str, str]) -> None:
        spark.read.format(fmt).options(**options).load().write.format("noop").mode("overwrite").save()

    sink_df = (
        spark.range(n, numPartitions=4)
        .select(F.expr(f"cast(repeat('x', {args.size}) as binary)").alias("body"))
        .cache()
    )
    sink_df.count()

    def sink(fmt: str, df: Any = sink_df) -> None:
        writer = df.write.format(fmt).mode("append")
        if fmt == "rocketmq":
            writer = writer.option("namesrvAddr", namesrv).option("topic", topic + "_sink")
        else:
            writer = writer.option("rows", "0").option("pertrigger", "0")
        writer.save()

    # Warm-up of the sink as of the source: every Python worker has its producer and the target topic exists.
    sink("rocketmq", sink_df.limit(400).repartition(4))

    cases: dict[str, tuple[Any, Any]] = {
        "stream": (
            lambda: stream(
                "rocketmq",
                {**common, "startingOffsets": "earliest", "maxOffsetsPerTrigger": str(args.max_offsets_per_trigger)},
            ),
            lambda: stream("arrowceiling", ceil_opts),
        ),
        "batch": (lambda: batch("rocketmq", common), lambda: batch("arrowceiling", ceil_opts)),
        "sink": (lambda: sink("rocketmq"), lambda: sink("arrowceiling")),
    }
    result: dict[str, object] = {}
    result[f"{prefix}loadavg_start"] = [round(x, 2) for x in os.getloadavg()]
    for name, (connector, ceiling_run) in cases.items():
        if name not in args.only:
            continue
        ours: list[float] = []
        top: list[float] = []
        server_share: list[float] = []
        spark_cpu: dict[str, list[float]] = {"connector": [], "ceiling": []}
        for _ in range(args.rounds):
            cpu0 = sum(cpu_seconds(p) for p in server_pids)
            spark0 = _spark_cpu_seconds(server_pids)
            wall = _timed(connector)
            ours.append(n / wall)
            server_share.append((sum(cpu_seconds(p) for p in server_pids) - cpu0) / wall)
            spark1 = _spark_cpu_seconds(server_pids)
            spark_cpu["connector"].append((spark1 - spark0) / n * 1e6)
            top.append(n / _timed(ceiling_run))
            spark_cpu["ceiling"].append((_spark_cpu_seconds(server_pids) - spark1) / n * 1e6)
        result[f"{prefix}{name}_rows_per_s"] = round(_median(ours))
        result[f"{prefix}{name}_ceiling_rows_per_s"] = round(_median(top))
        result[f"{prefix}{name}_ratio"] = round(_median(ours) / _median(top), 2)
        result[f"{prefix}{name}_runs"] = [round(x) for x in ours]
        result[f"{prefix}{name}_spark_cpu_us_per_row"] = round(_median(spark_cpu["connector"]), 1)
        result[f"{prefix}{name}_ceiling_spark_cpu_us_per_row"] = round(_median(spark_cpu["ceiling"]), 1)
        result[f"{prefix}{name}_ceiling_runs"] = [round(x) for x in top]
        servers_cpu = f"   servers' CPU {_median(server_share):.2f} cores" if server_pids else ""
        if server_pids:
            result[f"{prefix}{name}_servers_cpu_cores"] = round(_median(server_share), 2)
        print(
            f"  {name:6s} connector {round(_median(ours)):>8,} rows/s   ceiling {round(_median(top)):>8,} rows/s"
            f"   ratio {_median(ours) / _median(top):.2f}{servers_cpu}   Spark's CPU "
            f"{_median(spark_cpu['connector']):.1f} / {_median(spark_cpu['ceiling']):.1f} us/row",
            flush=True,
        )
    result[f"{prefix}loadavg_end"] = [round(x, 2) for x in os.getloadavg()]
    print(f"  load average (1/5/15 min) {result[f'{prefix}loadavg_start']} -> {result[f'{prefix}loadavg_end']}")
    if args.verbose:
        result[f"{prefix}stream_duration_ms"] = durations
    return result


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--namesrv", help="use running servers instead of starting a name server and a broker")
    p.add_argument("--messages", type=int, default=100_000)
    p.add_argument("--size", type=int, default=1024)
    p.add_argument("--max-offsets-per-trigger", type=int, default=50_000)
    p.add_argument(
        "--pull-batch-size",
        type=int,
        default=1024,
        help="the source's pullBatchSize (the broker started here answers up to 1024 messages / 8 MiB per pull)",
    )
    p.add_argument("--rounds", type=int, default=3, help="alternating connector/ceiling runs per case (median)")
    p.add_argument("--verbose", action="store_true", help="add the last streaming runs' durationMs per batch")
    p.add_argument("--only", default="stream,batch,sink", help="comma-separated cases: stream, batch, sink")
    p.add_argument(
        "--cluster",
        action="store_true",
        help="also run every case on a Spark standalone cluster (master + 2 workers x 1 core) started here",
    )
    args = p.parse_args(argv)
    args.only = {c.strip() for c in args.only.split(",")}
    try:
        import pyspark  # noqa: F401
    except ImportError:
        print("spark_bench: pyspark is not installed (pip install -e '.[spark]'); skipped")
        return 0
    with tempfile.TemporaryDirectory(prefix="spark-bench-") as tmp:
        work = Path(tmp)
        if args.namesrv:
            result = run(args.namesrv, args, work, [])
        else:
            with servers(work) as (ns, pids):
                result = run(ns, args, work, pids)
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
