"""TLS with J's keys: our SDK over TLS to a broker in enforcing mode; a plain client refused there and served in
permissive mode (plain and TLS on the same port); the broker registers with a TLS name server (``tls.enable``);
mutual TLS when the server requires a client certificate. Certificates from ``trustme``."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from client import Message, Producer, PullConsumer
from protocol.codes import RequestCode, ResponseCode
from protocol.command import RemotingCommand
from protocol.errors import RemotingError
from protocol.remoting import RemotingClient
from protocol.remoting.tls import client_context
from tests.eventually import eventually
from tests.harness import run_broker, run_namesrv
from tests.integration.test_acl_sdk import mqadmin
from tests.integration.tls_support import make_pki


@pytest.fixture
def pki(tmp_path: Path) -> dict[str, str]:
    return make_pki(tmp_path)


def _tls(pki: dict[str, str], mode: str) -> dict[str, str]:
    return {"tls.server.mode": mode, "tls.server.certPath": pki["cert"], "tls.server.keyPath": pki["key"]}


def _ping() -> RemotingCommand:
    return RemotingCommand.request(RequestCode.GET_BROKER_RUNTIME_INFO)


async def test_enforcing_sdk_over_tls_plain_refused(tmp_path: Path, pki: dict[str, str]) -> None:
    async with (
        run_namesrv(
            tmp_path,
            **{"tls.server.mode": "enforcing", "tls.server.certPath": pki["cert"], "tls.server.keyPath": pki["key"]},
        ) as ns,
        run_broker(
            ns,
            tmp_path,
            **_tls(pki, "enforcing"),
            **{"tls.enable": True, "tls.client.authServer": True, "tls.client.trustCertPath": pki["ca"]},
        ) as broker,
    ):
        assert broker.registrar is not None
        await eventually(lambda: broker.registrar is not None and broker.registrar.registrations > 0)
        tls = {"use_tls": True, "tls_trust_cert_path": pki["ca"]}
        async with Producer("PG_tls", ns.addr, **tls) as p:
            for i in range(3):
                await p.send(Message("TlsTopic", f"m{i}".encode()))
        async with PullConsumer("CG_tls", ns.addr, **tls) as c:
            c.subscribe("TlsTopic", "*")
            got: list[bytes] = []

            async def enough() -> bool:
                got.extend(m.body for m in await c.poll(timeout=1.0))
                return len(got) >= 3

            await eventually(enough, timeout=20)
        assert sorted(got) == [b"m0", b"m1", b"m2"]
        rc, out, err = await mqadmin("clusterList", "-n", ns.addr, "--useTLS", "--tlsTrustCertPath", pki["ca"])
        assert rc == 0 and broker.addr in out, err
        rc, _out, err = await mqadmin("clusterList", "-n", ns.addr)
        assert rc != 0
        plain = RemotingClient()
        try:
            with pytest.raises(RemotingError):
                await plain.invoke(broker.addr, _ping(), 3.0)
            with pytest.raises(RemotingError):
                await plain.invoke(ns.addr, RemotingCommand.request(RequestCode.GET_BROKER_CLUSTER_INFO), 3.0)
        finally:
            await plain.close()


async def test_permissive_serves_both_on_one_port(tmp_path: Path, pki: dict[str, str]) -> None:
    async with run_broker(None, tmp_path, **_tls(pki, "permissive")) as broker:
        plain = RemotingClient()
        tls = RemotingClient(ssl_context=client_context(trust_cert_path=pki["ca"]))
        host, port = broker.addr.rsplit(":", 1)
        _r, silent = await asyncio.open_connection(host, int(port))  # never sends its first byte: stop must not wait
        try:
            assert (await plain.invoke(broker.addr, _ping(), 5.0)).code == ResponseCode.SUCCESS
            assert (await tls.invoke(broker.addr, _ping(), 5.0)).code == ResponseCode.SUCCESS
        finally:
            await plain.close()
            await tls.close()
    silent.close()


async def test_mutual_tls_required(tmp_path: Path, pki: dict[str, str]) -> None:
    extra = {"tls.server.need.client.auth": "require", "tls.server.trustCertPath": pki["ca"]}
    async with run_broker(None, tmp_path, **_tls(pki, "enforcing"), **extra) as broker:
        anon = RemotingClient(ssl_context=client_context(trust_cert_path=pki["ca"]))
        mutual = RemotingClient(
            ssl_context=client_context(trust_cert_path=pki["ca"], cert_path=pki["ccert"], key_path=pki["ckey"])
        )
        try:
            assert (await mutual.invoke(broker.addr, _ping(), 5.0)).code == ResponseCode.SUCCESS
            with pytest.raises((RemotingError, asyncio.TimeoutError)):
                await anon.invoke(broker.addr, _ping(), 3.0)
        finally:
            await anon.close()
            await mutual.close()
