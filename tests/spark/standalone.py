"""A Spark standalone cluster in separate processes, for the Spark suite and ``bench/spark_bench.py --cluster``.

A master and ``workers`` workers, each a JVM started with pyspark's own ``bin/spark-class``
(``org.apache.spark.deploy.master.Master`` / ``org.apache.spark.deploy.worker.Worker``) on free ports, bound to
127.0.0.1, logs and work directories under ``work``. Each process runs in its own session (process group), so
:meth:`Standalone.kill_worker` takes down a worker together with the executor JVM and the Python workers it started,
as when a machine dies. Readiness is polled from the master's JSON status page (``/json/``), never waited for by time.

    with Standalone(tmp, workers=2, cores=1, memory="1g") as spark_cluster:
        spark_cluster.url          # spark://127.0.0.1:<port>, for SparkSession.builder.master(...)
        spark_cluster.kill_worker(0)
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import urllib.request
from pathlib import Path
from types import TracebackType
from typing import Any

from tests.eventually import eventually_sync
from tests.servers import REPO, free_port

BOOT_TIMEOUT_S = 90.0


def spark_home() -> Path:
    """The Spark distribution inside the installed pyspark package (it ships ``bin/spark-class`` and the jars)."""
    import pyspark

    return Path(pyspark.__file__).resolve().parent


class _JavaProc:
    """A ``spark-class`` JVM in its own process group, stdout and stderr into ``log``."""

    def __init__(self, args: list[str], log: Path, env: dict[str, str]) -> None:
        self.log = log
        self._out = open(log, "wb")  # noqa: SIM115 - closed in stop()
        self.p = subprocess.Popen(
            [str(spark_home() / "bin" / "spark-class"), *args],
            cwd=REPO,
            stdout=self._out,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            env=env,
            start_new_session=True,
        )

    def kill(self) -> None:
        """SIGKILL the whole process group: the JVM and every process it started (executors, Python workers)."""
        if self.p.poll() is None:
            os.killpg(self.p.pid, signal.SIGKILL)
        self.p.wait()

    def stop(self, timeout: float = 20) -> None:
        if self.p.poll() is None:
            os.killpg(self.p.pid, signal.SIGTERM)
            try:
                self.p.wait(timeout)
            except subprocess.TimeoutExpired:
                self.kill()
        # Executors and Python workers of this group may outlive a terminated worker JVM for a moment.
        try:
            os.killpg(self.p.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self._out.close()


class Standalone:
    """A standalone master and its workers; ``start()`` returns once every worker registered (context manager)."""

    def __init__(self, work: Path, *, workers: int = 2, cores: int = 1, memory: str = "1g") -> None:
        self.work = work
        self.n_workers, self.cores, self.memory = workers, cores, memory
        self.port, self.ui_port = free_port(), free_port()
        self.master: _JavaProc | None = None
        self.workers: list[_JavaProc] = []

    @property
    def url(self) -> str:
        return f"spark://127.0.0.1:{self.port}"

    def _env(self) -> dict[str, str]:
        conf = self.work / "conf"  # empty: no spark-defaults.conf or spark-env.sh from elsewhere is picked up
        conf.mkdir(parents=True, exist_ok=True)
        return {
            **os.environ,
            "SPARK_HOME": str(spark_home()),
            "SPARK_CONF_DIR": str(conf),
            "SPARK_LOCAL_IP": "127.0.0.1",
            "SPARK_LOG_DIR": str(self.work / "logs"),
        }

    def status(self) -> dict[str, Any]:
        """The master's ``/json/`` page: workers (with state), alive worker count, applications."""
        with urllib.request.urlopen(f"http://127.0.0.1:{self.ui_port}/json/", timeout=5) as reply:
            return dict(json.load(reply))

    def _alive_workers(self) -> int:
        try:
            return int(self.status()["aliveworkers"])
        except OSError:  # the master's web UI is not up yet
            return 0

    def start(self) -> Standalone:
        """Start the master and the workers and wait until every worker registered."""
        self.spawn()
        return self.wait_ready()

    def spawn(self) -> None:
        """Start the master and the workers without waiting (boot other servers meanwhile, then ``wait_ready``)."""
        env = self._env()
        self.master = _JavaProc(
            [
                *("org.apache.spark.deploy.master.Master", "--host", "127.0.0.1", "--port", str(self.port)),
                *("--webui-port", str(self.ui_port)),
            ],
            self.work / "master.log",
            env,
        )
        for i in range(self.n_workers):
            self.start_worker(i)

    def wait_ready(self) -> Standalone:
        eventually_sync(
            lambda: self._alive_workers() >= self.n_workers,
            timeout=BOOT_TIMEOUT_S,
            what=f"{self.n_workers} workers registered with the master (see {self.work}/*.log)",
            step=0.25,
        )
        return self

    def start_worker(self, i: int) -> None:
        """Start worker ``i`` (1 JVM; it launches executor JVMs for applications)."""
        work_dir = self.work / f"worker-{i}"
        work_dir.mkdir(parents=True, exist_ok=True)
        proc = _JavaProc(
            [
                *("org.apache.spark.deploy.worker.Worker", "--host", "127.0.0.1", "--webui-port", "0"),
                *("--cores", str(self.cores), "--memory", self.memory, "--work-dir", str(work_dir), self.url),
            ],
            self.work / f"worker-{i}.log",
            self._env(),
        )
        if i < len(self.workers):
            self.workers[i] = proc
        else:
            self.workers.append(proc)

    def kill_worker(self, i: int) -> None:
        """SIGKILL worker ``i`` with its executor and Python workers."""
        self.workers[i].kill()

    def stop(self) -> None:
        for w in self.workers:
            w.stop()
        if self.master is not None:
            self.master.stop()

    def __enter__(self) -> Standalone:
        try:
            return self.start()
        except BaseException:
            self.stop()
            raise

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()


def executor_conf(python: str, memory: str = "512m") -> dict[str, str]:
    """SparkSession settings for an application on a :class:`Standalone` cluster: one core per executor, small
    memory, the driver's Python for the Python workers, and the repository on the executors' ``PYTHONPATH`` (the
    connector is installed there as on the driver; nothing else travels but the query's options)."""
    return {
        "spark.executor.cores": "1",
        "spark.executor.memory": memory,
        "spark.driver.memory": memory,
        "spark.pyspark.python": python,
        "spark.executorEnv.PYTHONPATH": str(REPO),
        "spark.driver.host": "127.0.0.1",
        "spark.driver.bindAddress": "127.0.0.1",
        "spark.ui.enabled": "false",
        "spark.sql.shuffle.partitions": "2",
    }
