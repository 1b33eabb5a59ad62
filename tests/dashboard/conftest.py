"""Fixtures of the Dashboard suite: the cluster, its traffic and the Dashboard process, one of each per module and
backend (see ``tests/dashboard/support.py``). ``backend`` is a module-scoped parameter, so every test runs against
rocketq and against Apache RocketMQ 5.5.0 (``make peers``; skipped with the reason when not built), each backend's
tests in a row against one cluster and one Dashboard JVM.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import sync_playwright

from client import ConsumeResult, Message
from client.sync import Producer, PushConsumer
from protocol.message_ext import MessageExt
from tests.dashboard.support import (
    BACKENDS,
    BOOT_TIMEOUT_S,
    CHROMIUM,
    CHROMIUM_ARGS,
    CLUSTER,
    DLQ_GROUP,
    DLQ_TOPIC,
    GROUP,
    LAG_GROUP,
    MESSAGES,
    TOPIC,
    Cluster,
    Env,
    Traffic,
    dashboard_jar,
    http_ok,
)
from tests.eventually import eventually_sync
from tests.reference import peers
from tests.servers import REPO, Proc, free_port, free_port_pair, launch


@pytest.fixture(scope="module", params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> str:
    """ "rocketq" or "apache": the cluster the module's tests run against."""
    name = str(request.param)
    if name == "apache" and (why := peers.missing("apache")):
        pytest.skip(why)
    return name


@pytest.fixture(scope="module")
def artifacts(backend: str) -> Path:
    out = Path(os.environ.get("DASHBOARD_ARTIFACTS", REPO / "tmp" / "artifacts" / "dashboard")) / backend
    out.mkdir(parents=True, exist_ok=True)
    print(f"\ndashboard screenshots ({backend}): {out}")
    return out


@pytest.fixture(scope="module")
def servers(
    request: pytest.FixtureRequest, backend: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Cluster]:
    """The module's cluster of cluster name CLUSTER; a module's ``broker_extra(tmp)`` (rocketq) or
    ``apache_broker_extra(tmp)`` (Apache RocketMQ) adds broker config lines (written before the start)."""
    tmp = tmp_path_factory.mktemp(f"dash-{backend}")
    extra = getattr(request.module, "broker_extra" if backend == "rocketq" else "apache_broker_extra", None)
    lines = extra(tmp) if extra is not None else ""
    if backend == "apache":
        apache = peers.start_apache(tmp, lines, cluster_name=CLUSTER, proxy=False)
        try:
            yield Cluster(backend, apache.ns_addr, apache.broker_addr)
        finally:
            apache.stop()
        return
    s = launch(tmp, cluster=CLUSTER, listen_port=free_port_pair(), broker_extra=lines)
    try:
        yield Cluster(backend, s.ns_addr, s.broker_addr)
    finally:
        for p in reversed(s.procs):
            assert p.stop() == 0, f"server did not stop cleanly; see {p.log}"


@pytest.fixture(scope="module")
def traffic(servers: Cluster) -> Iterator[Traffic]:
    ns = servers.ns_addr
    t = Traffic(keys=[f"dash-key-{i}" for i in range(MESSAGES)])
    consumed: set[str] = set()

    def ok(msgs: list[MessageExt]) -> ConsumeResult:
        consumed.update(m.msg_id for m in msgs)
        return ConsumeResult.SUCCESS

    def dlq(msgs: list[MessageExt]) -> ConsumeResult:
        # the first delivery of a body fails (maxReconsumeTimes 0: straight to %DLQ%), a later one (the Dashboard's
        # resend, consumeMessageDirectly) succeeds
        with t.lock:
            first = all(m.body.decode() not in t.dlq_seen for m in msgs)
            t.dlq_seen.extend(m.body.decode() for m in msgs)
        return ConsumeResult.RECONSUME_LATER if first else ConsumeResult.SUCCESS

    clients: list[Producer | PushConsumer] = []
    try:
        producer = Producer("DashProducer", namesrv_addr=ns)
        clients.append(producer)
        producer.start()
        for i, key in enumerate(t.keys):
            producer.send(Message(TOPIC, f"dashboard body {i}".encode(), tags="TagA", keys=key))
        for i in range(3):
            producer.send(Message(DLQ_TOPIC, f"dlq body {i}".encode(), keys=f"dlq-key-{i}"))
        # a group that consumed everything and went offline: its lag is 0 until the Dashboard resets it
        lag = PushConsumer(LAG_GROUP, namesrv_addr=ns, consume_from_where="FIRST_OFFSET")
        lag_seen: set[str] = set()
        lag.subscribe(TOPIC, "*", lambda msgs: (lag_seen.update(m.msg_id for m in msgs), ConsumeResult.SUCCESS)[1])
        lag.start()
        eventually_sync(lambda: len(lag_seen) >= MESSAGES, 60, "the lag group to consume everything")
        lag.close()  # persists its offsets
        consumer = PushConsumer(GROUP, namesrv_addr=ns, consume_from_where="FIRST_OFFSET")
        clients.append(consumer)
        consumer.subscribe(TOPIC, "*", ok)
        consumer.start()
        dlq_consumer = PushConsumer(
            DLQ_GROUP, namesrv_addr=ns, max_reconsume_times=0, consume_from_where="FIRST_OFFSET"
        )
        clients.append(dlq_consumer)
        dlq_consumer.subscribe(DLQ_TOPIC, "*", dlq)
        dlq_consumer.start()
        eventually_sync(lambda: len(consumed) >= MESSAGES, 60, "the push consumer to consume everything")
        eventually_sync(lambda: len(t.dlq_seen) >= 3, 60, "the DLQ consumer to fail its messages")
        yield t
    finally:
        for c in reversed(clients):
            c.close()


@pytest.fixture(scope="module")
def dashboard(
    request: pytest.FixtureRequest, servers: Cluster, artifacts: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Env]:
    """The Dashboard on a free port against the module's cluster, default configuration plus the module's
    ``DASHBOARD_ARGS``; after the module's ``traffic`` unless it sets ``TRAFFIC = False``."""
    traffic: Traffic = (
        request.getfixturevalue("traffic") if getattr(request.module, "TRAFFIC", True) else Traffic(keys=[])
    )
    jar = dashboard_jar()
    assert jar is not None
    java = shutil.which("java")
    assert java is not None
    data = tmp_path_factory.mktemp("dashdata")
    port = free_port()
    proc = Proc(
        [
            java,
            "-Xmx384m",
            "-XX:+UseSerialGC",
            "-XX:TieredStopAtLevel=1",
            "-jar",
            str(jar),
            f"--server.port={port}",
            f"--rocketmq.config.namesrvAddrs={servers.ns_addr}",
            f"--rocketmq.config.dataPath={data}",
            *getattr(request.module, "DASHBOARD_ARGS", ()),
        ],
        data / "dashboard.log",
    )
    url = f"http://127.0.0.1:{port}"
    try:
        eventually_sync(
            lambda: proc.p.poll() is not None or http_ok(url), BOOT_TIMEOUT_S, "the Dashboard to serve HTTP"
        )
        assert proc.p.poll() is None, f"the Dashboard exited; see {data / 'dashboard.log'}"
        yield Env(servers, url, traffic, artifacts)
    finally:
        proc.stop()


@pytest.fixture(scope="module")
def page(dashboard: Env) -> Iterator[Any]:
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        try:
            pg = browser.new_page(viewport={"width": 1440, "height": 900})
            pg.set_default_timeout(60_000)
            pg.goto(dashboard.url + "/#/ops")
            yield pg
        finally:
            browser.close()
