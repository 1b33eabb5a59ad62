"""The Java 5.x client's rows of ``bench/latency_bench.py``: one JVM of ``tests/reference/java5``'s driver (command
``bench``: sends each awaited, from 1 or 32 threads) for the whole invocation, against any gRPC endpoint."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

GRPC_ROWS = (
    ("gRPC Java 5.x client, single send (msgs/s)", 1, "msgsPerSec"),
    ("gRPC Java 5.x client, single send p50 (ms)", 1, "p50Ms"),
    ("gRPC Java 5.x client, single send p99 (ms)", 1, "p99Ms"),
    ("gRPC Java 5.x client, 32 threads (msgs/s)", 32, "msgsPerSec"),
)
# the Java 5.x client's JVM for the gRPC rows: full JIT, unlike the reference tests' C1-only driver
CLIENT_JVM_OPTS = ["-Xms256m", "-Xmx256m", "-XX:+UseG1GC"]


class Java5:
    """One Java 5.x client JVM (``tests/reference/java5``'s driver) for every gRPC row of the invocation."""

    driver: Any = None

    @classmethod
    def bench(cls, endpoint: str, topic: str, threads: int, n: int, size: int, warm_ms: int) -> dict[str, Any] | None:
        from tests.reference.peers import Driver

        if cls.driver is None:
            log = Path(tempfile.mkdtemp(prefix="latency-java5-")) / "driver.log"
            cls.driver = Driver.java5(log, CLIENT_JVM_OPTS)
        args = {"endpoint": endpoint, "topic": topic, "threads": threads, "count": n, "size": size, "warmMs": warm_ms}
        events = cls.driver.run(cmd="bench", timeout=900, **args)
        for e in events:
            if e["event"] == "bench":
                return dict(e)
        print(f"    failed: {events}", flush=True)
        return None

    @classmethod
    def close(cls) -> None:
        if cls.driver is not None:
            cls.driver.close()
            cls.driver = None
