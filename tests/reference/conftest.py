"""Session fixtures of the reference suite: Apache RocketMQ 5.5.0 and rocketq started side by side (in parallel, the
JVMs take ~30 s on 2 cores), and one driver process per official client shared by every scenario. ``targets`` run
with the common settings; ``filter_targets`` (a second pair, only when a SQL92 scenario asks) with
``enablePropertyFilter=true``."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.reference.peers import Apache, Driver, missing, start_apache, start_rocketq
from tests.servers import Servers


@dataclass(frozen=True)
class Target:
    """One cluster a scenario runs against: "apache" or "rocketq"."""

    name: str
    ns_addr: str
    broker_addr: str
    grpc_endpoint: str


def need(peer: str) -> None:
    if reason := missing(peer):
        pytest.skip(reason)


@contextlib.contextmanager
def cluster_pair(work: Path, apache_extra: str, rocketq_extra: str) -> Iterator[dict[str, Target]]:
    """A second pair of clusters for one module, without proxies: Apache RocketMQ with ``apache_extra`` and
    rocketq with ``rocketq_extra`` broker config lines, started side by side."""
    need("apache")
    with ThreadPoolExecutor(2) as pool:
        apache_f = pool.submit(start_apache, work / "apache", apache_extra, proxy=False)
        ours_f = pool.submit(start_rocketq, work / "rocketq", rocketq_extra)
        try:
            apache, (ours, _) = apache_f.result(), ours_f.result()
        except BaseException:
            if apache_f.exception() is None:
                apache_f.result().stop()
            if ours_f.exception() is None:
                ours_f.result()[0].stop()
            raise
    try:
        yield {
            "apache": Target("apache", apache.ns_addr, apache.broker_addr, ""),
            "rocketq": Target("rocketq", ours.ns_addr, ours.broker_addr, ""),
        }
    finally:
        apache.stop()
        ours.stop()


@contextlib.contextmanager
def clusters(work: Path, broker_extra: str = "") -> Iterator[dict[str, Target]]:
    """Both clusters with the same extra broker settings, keyed by name; Apache RocketMQ first in iteration order."""
    with ThreadPoolExecutor(2) as pool:
        apache_f = pool.submit(start_apache, work / "apache", broker_extra)
        ours_f = pool.submit(start_rocketq, work / "rocketq", broker_extra)
        apache: Apache | None = None
        ours: Servers | None = None
        try:
            apache = apache_f.result()
            ours, ours_grpc = ours_f.result()
            yield {
                "apache": Target("apache", apache.ns_addr, apache.broker_addr, apache.grpc_endpoint),
                "rocketq": Target("rocketq", ours.ns_addr, ours.broker_addr, ours_grpc),
            }
        finally:
            if apache is None and apache_f.exception() is None:
                apache = apache_f.result()
            if ours is None and ours_f.exception() is None:
                ours = ours_f.result()[0]
            if apache is not None:
                apache.stop()
            if ours is not None:
                ours.stop()


@pytest.fixture(scope="session")
def targets(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Target]]:
    """Both clusters with the common settings (``enablePropertyFilter`` off, the default of both)."""
    need("apache")
    with clusters(tmp_path_factory.mktemp("reference")) as both:
        yield both


@pytest.fixture(scope="session")
def filter_targets(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Target]]:
    """Both clusters with ``enablePropertyFilter=true`` (SQL92 subscriptions), started when a scenario needs them."""
    need("apache")
    with clusters(tmp_path_factory.mktemp("reference-filter"), "enablePropertyFilter=true\n") as both:
        yield both


@pytest.fixture(scope="session")
def java4(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Driver]:
    need("java4")
    with Driver.java4(tmp_path_factory.mktemp("java4") / "driver.log") as d:
        yield d


@pytest.fixture(scope="session")
def java5(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Driver]:
    need("java5")
    with Driver.java5(tmp_path_factory.mktemp("java5") / "driver.log") as d:
        yield d


@pytest.fixture(scope="session")
def godriver(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Driver]:
    need("go")
    with Driver.go(tmp_path_factory.mktemp("go") / "driver.log") as d:
        yield d
