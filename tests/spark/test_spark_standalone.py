"""The rocketmq source on a Spark standalone cluster reading a topic spread over two brokers, through a worker crash
and a driver crash: every message exactly once, the consumer group's lag at 0.

Everything is a separate process: a name server and two brokers (groups ``broker-a`` and ``broker-b``), a standalone
master and two workers (1 core each; each runs its own executor JVM and Python workers), and the driver
(``tests.spark.cluster_driver``), so each can be SIGKILLed. The executors get nothing from the driver's process but
the query's options: they open their own connections to the name server and the brokers.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.eventually import eventually_sync
from tests.servers import REPO, add_broker
from tests.spark.standalone import Standalone
from tests.spark.support import SPARK_BROKER_CONF, group_offsets, mqadmin, produce, start_cluster

pytestmark = pytest.mark.spark

TOPIC, GROUP = "spark_standalone", "spark_standalone_group"
FIRST, SECOND = 4000, 800  # messages before the first driver, and while the driver is down
PER_TRIGGER = "400"


class Driver:
    """``tests.spark.cluster_driver`` in its own process group (the Python driver and its JVM die together)."""

    def __init__(self, log: Path, *args: str) -> None:
        self.log = log
        with open(log, "ab") as out:
            self.p = subprocess.Popen(
                [sys.executable, "-m", "tests.spark.cluster_driver", *args],
                cwd=REPO,
                stdout=out,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                env={**os.environ, "PYTHONPATH": str(REPO), "SPARK_LOCAL_IP": "127.0.0.1"},
                start_new_session=True,
            )

    def kill(self) -> None:
        if self.p.poll() is None:
            os.killpg(self.p.pid, signal.SIGKILL)
        self.p.wait()

    def running(self) -> bool:
        if self.p.poll() is not None:
            raise AssertionError(f"the driver exited with {self.p.returncode}: {self.log.read_text()[-3000:]}")
        return True


def _batches(out: Path) -> dict[int, list[list[object]]]:
    return {int(f.stem.split("-")[1]): json.loads(f.read_text()) for f in sorted(out.glob("batch-*.json"))}


@pytest.mark.timeout(600)
def test_standalone_cluster_two_brokers_survives_worker_and_driver_kills(tmp_path: Path) -> None:
    pytest.importorskip("pyspark")
    if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
        pytest.skip("Java 17 is not installed (make test-spark installs it)")
    spark_cluster = Standalone(tmp_path / "spark", workers=2, cores=1, memory="1g")
    spark_cluster.spawn()  # the JVMs boot while the brokers do
    servers = start_cluster(tmp_path / "broker-a")
    second = None
    drivers: list[Driver] = []
    try:
        second = add_broker(
            servers.ns_addr,
            tmp_path / "broker-b",
            cluster="SparkCluster",
            broker_name="broker-b",
            broker_extra=SPARK_BROKER_CONF,
        )
        mqadmin(servers, "updateTopic", "-c", "SparkCluster", "-t", TOPIC, "-r", "4", "-w", "4")
        sent = produce(servers, TOPIC, [f"m-{i}".encode() for i in range(FIRST)])
        spark_cluster.wait_ready()

        out, checkpoint = tmp_path / "out", tmp_path / "checkpoint"
        args = ["--master", spark_cluster.url, "--namesrv", servers.ns_addr, "--topic", TOPIC, "--group", GROUP]
        args += ["--checkpoint", str(checkpoint), "--out", str(out), "--max-per-trigger", PER_TRIGGER]
        drivers.append(Driver(tmp_path / "driver-1.log", *args))
        eventually_sync(lambda: drivers[0].running() and len(_batches(out)) >= 2, 240, "two batches", 0.25)

        # A worker dies with its executor and Python workers: its tasks run again on the other executor.
        spark_cluster.kill_worker(0)
        done = len(_batches(out))
        eventually_sync(lambda: drivers[0].running() and len(_batches(out)) >= done + 2, 240, "recovery", 0.25)
        assert "Lost executor" in drivers[0].log.read_text()

        # The driver dies mid-query; more messages arrive while it is down; it restarts from its checkpoint.
        drivers[0].kill()
        before_restart = sum(len(rows) for rows in _batches(out).values())
        assert before_restart < FIRST, "the first driver read everything before it was killed"
        sent += produce(servers, TOPIC, [f"n-{i}".encode() for i in range(SECOND)])
        # (A larger limit for the new batches; the batch that was in flight is replayed with its logged range.)
        drivers.append(Driver(tmp_path / "driver-2.log", *args, "--max-per-trigger", "2000", "--available-now"))
        assert drivers[1].p.wait(300) == 0, drivers[1].log.read_text()[-3000:]

        rows = [row for rows in _batches(out).values() for row in rows]
        assert sorted(str(r[3]) for r in rows) == sorted(b.decode() for b in sent)  # every message exactly once
        positions = {(str(r[0]), int(str(r[1])), int(str(r[2]))) for r in rows}
        assert len(positions) == len(rows) == FIRST + SECOND
        assert {broker for broker, _, _ in positions} == {"broker-a", "broker-b"}

        offsets = eventually_sync(
            lambda: (o := group_offsets(servers, GROUP, TOPIC)) and all(c == m for c, m in o.values()) and o,
            60,
            "the consumer group's lag at 0",
        )
        assert len(offsets) == 8 and sum(m for _, m in offsets.values()) == FIRST + SECOND
    finally:
        for d in drivers:
            d.kill()
        spark_cluster.stop()
        if second is not None:
            second.stop()
        servers.stop()
