"""Fixtures of the Spark suite: a name server and a broker in their own processes, and one local SparkSession.

Spark runs ``read()``/``write()`` in Python worker processes that dial the broker over TCP, so the servers cannot
live in the test's event loop: they run as ``python -m namesrv`` / ``python -m broker`` subprocesses on free ports,
with their files in a temporary directory, for the whole session. The SparkSession is ``local[2]``, UI off, two
shuffle partitions, bound to 127.0.0.1. Everything here is skipped when pyspark or Java is missing.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import sys
from collections.abc import Iterator
from typing import Any

import pytest

from tests.spark.support import ROOT, Cluster, start_cluster


@pytest.fixture(scope="session")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    """A name server and one broker (``broker-a``, auto-create topics with 4 queues) for the whole Spark suite."""
    c = start_cluster(tmp_path_factory.mktemp("servers"))
    try:
        yield c
    finally:
        c.stop()


@pytest.fixture(scope="session")
def spark(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """One local SparkSession for the whole suite, with the rocketmq source registered."""
    pytest.importorskip("pyspark")
    pytest.importorskip("pyarrow")
    if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
        pytest.skip("Java 17 is not installed (make test-spark installs it)")
    os.environ["SPARK_LOCAL_IP"] = "127.0.0.1"
    os.environ["PYSPARK_PYTHON"] = sys.executable
    os.environ["PYSPARK_DRIVER_PYTHON"] = sys.executable
    os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
    from pyspark.sql import SparkSession

    from spark_connector import register

    warehouse = tmp_path_factory.mktemp("spark-warehouse")
    session = (
        SparkSession.builder.master("local[2]")
        .appName("rocketq-spark-tests")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.driver.memory", "1g")
        .config("spark.sql.warehouse.dir", str(warehouse))
        .config("spark.driver.extraJavaOptions", f"-Dderby.system.home={warehouse}")
        .config("spark.sql.streaming.stopTimeout", "30s")
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    register(session)
    try:
        yield session
    finally:
        with contextlib.suppress(Exception):
            for q in session.streams.active:
                q.stop()
        session.stop()
