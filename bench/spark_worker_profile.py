"""What a Spark Python worker spends on the connector: its reader and sink functions run outside Spark, with cProfile.

    python bench/spark_worker_profile.py                 # read and sink, 50k messages of 1 KiB, top 20 functions
    python bench/spark_worker_profile.py --only read --top 30 --pull-batch-size 1024
    python bench/spark_worker_profile.py --only sink --sink-option sendBatchMaxBytes=2097152

Starts a name server and a broker as ``bench/spark_bench.py`` does (same configuration), produces ``--messages``
bodies of ``--size`` bytes to a fresh topic of 4 queues, then calls what an executor task calls, in this process:

* ``read``: :func:`spark_connector.reader.read_range` over every queue's whole range (the batch read's tasks);
* ``sink``: :func:`spark_connector.sink.write_rows` with Arrow batches of 10,000 ``body`` rows (Spark's default
  ``maxRecordsPerBatch``), the shape the bench's sink case writes.

Each case runs once to warm up (connections, routes), ``--rounds`` times timed, then once under cProfile. Printed
per case: rows/s (wall) and the client's CPU per row (``time.process_time``: the caller's thread, and for the sink
the client's event-loop thread too), which is what the connector adds to a Spark worker beyond the ceiling source,
and the CPU the name server and the broker spent meanwhile per row (on one machine, taken from Spark's cores); then
the cProfile top of the calling thread (which runs the reader's pull loop itself; the sink's event-loop thread is not
profiled: its CPU is in the per-row figure). On a
loaded machine wall figures vary a lot between runs; CPU per row much less.
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def _timed(label: str, fn: Callable[[], int], rounds: int, top: int, server_pids: list[int]) -> None:
    from bench._util import cpu_seconds

    fn()  # warm-up
    for _ in range(rounds):
        s0 = sum(cpu_seconds(p) for p in server_pids)
        t0, c0 = time.perf_counter(), time.process_time()
        rows = fn()
        wall, cpu = time.perf_counter() - t0, time.process_time() - c0
        servers = sum(cpu_seconds(p) for p in server_pids) - s0
        print(
            f"{label}: {rows} rows  {rows / wall:>9,.0f} rows/s  client CPU {cpu / rows * 1e6:5.1f} us/row"
            f"  servers' CPU {servers / rows * 1e6:5.1f} us/row",
            flush=True,
        )
    if top:
        prof = cProfile.Profile()
        prof.runcall(fn)
        pstats.Stats(prof).sort_stats("tottime").print_stats(top)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--messages", type=int, default=50_000)
    p.add_argument("--size", type=int, default=1024)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--top", type=int, default=20, help="cProfile rows to print per case (0: no profile)")
    p.add_argument("--pull-batch-size", type=int, default=256)
    p.add_argument("--only", default="read,sink", help="comma-separated cases: read, sink")
    p.add_argument(
        "--sink-option",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a sink option for the sink case (repeatable), e.g. sendBatchMaxBytes=2097152",
    )
    args = p.parse_args(argv)
    only = {c.strip() for c in args.only.split(",")}
    try:
        import pyarrow as pa
        from pyspark.sql.types import BinaryType, StructField, StructType
    except ImportError:
        print("spark_worker_profile: pyspark is not installed (pip install -e '.[spark]'); skipped")
        return 0

    from bench.spark_bench import produce, servers
    from spark_connector import _client
    from spark_connector.options import parse_sink_options, parse_source_options
    from spark_connector.planning import QueueRange
    from spark_connector.reader import read_range
    from spark_connector.sink import SinkColumns, write_rows

    with tempfile.TemporaryDirectory(prefix="spark-profile-") as tmp, servers(Path(tmp)) as (ns, pids):
        topic = f"spark_profile_{int(time.time())}"
        produce(ns, topic, args.messages, args.size)
        if "read" in only:
            opts = parse_source_options(
                {"namesrvAddr": ns, "subscribe": topic, "pullBatchSize": str(args.pull_batch_size)}, streaming=False
            )
            admin = _client.AdminSession([ns], 10_000)
            bounds = admin.bounds(admin.queues(topic))
            admin.close()
            ranges = [QueueRange(q.topic, q.broker, q.queue_id, b.min, b.max) for q, b in bounds.items()]
            _timed(
                "read",
                lambda: sum(rb.num_rows for r in ranges for rb in read_range(opts, r)),
                args.rounds,
                args.top,
                pids,
            )
        if "sink" in only:
            extra = dict(kv.split("=", 1) for kv in args.sink_option)
            sink_opts = parse_sink_options({"namesrvAddr": ns, "topic": topic + "_sink", **extra})
            cols = SinkColumns.from_schema(StructType([StructField("body", BinaryType())]), sink_opts)
            body = b"x" * args.size
            full = pa.RecordBatch.from_arrays([pa.array([body] * 10_000, pa.binary())], names=["body"])
            parts = [full.slice(0, min(10_000, args.messages - i)) for i in range(0, args.messages, 10_000)]
            _timed("sink", lambda: write_rows(sink_opts, cols, iter(parts)).rows, args.rounds, args.top, pids)
    return 0


if __name__ == "__main__":
    sys.exit(main())
