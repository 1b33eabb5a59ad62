"""Fixtures every integration module gets (nats.py's shape: real servers on free ports, stopped whatever the test
did): ``client``, a bare remoting client for raw frames, and ``cluster``, a name server plus one broker with fast
delay levels and transaction checks (``tests.integration.client_support.Cluster``), and ``stub``, a v2 gRPC
stub on the endpoint of the module's own ``broker`` fixture (a broker run with ``enableProxy=True``). Waiting on a
condition is ``tests.eventually.eventually``.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from broker.app import BrokerApp
from protocol.remoting import RemotingClient
from tests.harness import run_broker, run_namesrv
from tests.integration.client_support import FAST_DELAYS, Cluster


@pytest.fixture
async def client() -> AsyncIterator[RemotingClient]:
    c = RemotingClient()
    try:
        yield c
    finally:
        await c.close()


@pytest.fixture
async def cluster(tmp_path: Path) -> AsyncIterator[Cluster]:
    async with (
        run_namesrv(tmp_path) as ns,
        run_broker(
            ns, tmp_path, messageDelayLevel=FAST_DELAYS, transactionCheckInterval=500, transactionTimeOut=300
        ) as broker,
    ):
        yield Cluster(ns, broker, tmp_path)


@pytest.fixture
async def stub(broker: BrokerApp) -> AsyncIterator[Any]:
    import grpc

    from broker.proxy.pb import service_pb2_grpc

    assert broker.proxy is not None
    async with grpc.aio.insecure_channel(f"127.0.0.1:{broker.proxy.port}") as ch:
        yield service_pb2_grpc.MessagingServiceStub(ch)
