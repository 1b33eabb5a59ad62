"""The HA port under attack (issue 34): without the shared secret or an admin ACL account nobody gets the commit log
(RocketMQ's port streams it to anyone who sends 8 bytes); slaves that authenticate replicate as before; with TLS on
the master the HA stream is TLS, and a plaintext reader gets nothing."""

from __future__ import annotations

import asyncio
import contextlib
import ssl
import struct
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from broker.app import BrokerApp
from broker.store.request import PutRequest
from namesrv.app import NamesrvApp
from protocol.bodies import TopicConfig
from tests.eventually import eventually as until
from tests.harness import run_broker, run_namesrv
from tests.integration.acl_support import write_acl
from tests.integration.ha_support import log_bytes
from tests.integration.tls_support import make_pki

TOPIC = "TopicHASec"
SECRET_BODY = b"ha-secret-payload"
FAST = {"registerNameServerPeriod": 1000, "haHousekeepingInterval": 2000, "haSendHeartbeatInterval": 500}


@asynccontextmanager
async def pair(
    ns: NamesrvApp, tmp_path: Path, master_conf: dict[str, Any], slave_conf: dict[str, Any]
) -> AsyncIterator[tuple[BrokerApp, BrokerApp]]:
    common: dict[str, Any] = {"brokerName": "broker-hasec", **FAST}
    async with (
        run_broker(
            ns, tmp_path, brokerRole="ASYNC_MASTER", storePathRootDir=tmp_path / "m", haMasterForceWritable=True,
            **common, **master_conf,
        ) as master,
        run_broker(
            ns, tmp_path, brokerRole="SLAVE", brokerId=1, storePathRootDir=tmp_path / "s", **common, **slave_conf
        ) as slave,
    ):  # fmt: skip
        master.topics.put(TopicConfig.with_queues(TOPIC, 1))
        yield master, slave


async def put_some(master: BrokerApp, n: int = 20) -> int:
    assert master.store is not None
    for i in range(n):
        res = await master.store.put_message(PutRequest(TOPIC, 0, 0, 0, 0, "127.0.0.1:1", SECRET_BODY + b"%d" % i, ""))
        assert res.items, res.status
    return master.store.commitlog.max_offset


async def steal(port: int, sent: bytes, *, tls: ssl.SSLContext | None = None) -> bytes:
    """Connect to the HA port, send ``sent``, and read whatever comes back until the master closes (or 5 s)."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port, ssl=tls)
    got = b""
    try:
        writer.write(sent)
        await writer.drain()
        async with asyncio.timeout(5):
            while chunk := await reader.read(65536):
                got += chunk
    except (TimeoutError, ConnectionError, ssl.SSLError):
        pass
    finally:
        writer.close()
        with contextlib.suppress(Exception):
            await writer.wait_closed()
    return got


async def replicated(master: BrokerApp, slave: BrokerApp, end: int) -> None:
    assert master.store is not None and slave.store is not None
    await until(lambda: slave.store is not None and slave.store.commitlog.max_offset >= end, what="slave catches up")
    start = master.store.commitlog.min_offset
    assert log_bytes(slave.store, start, end) == log_bytes(master.store, start, end)


async def test_attack_read_the_commit_log_from_the_ha_port_with_8_bytes(tmp_path: Path) -> None:
    async with (
        run_namesrv(tmp_path) as ns,
        pair(ns, tmp_path, {"haAuthSecret": "s3cret-ha"}, {"haAuthSecret": "s3cret-ha"}) as (master, slave),
    ):
        end = await put_some(master)
        await replicated(master, slave, end)  # the slave that knows the secret replicates
        assert master.ha is not None and master.ha.master is not None
        port = master.ha.ha_port
        # RocketMQ's attack: 8 bytes of offset 0 (then silence), and the same followed by a made-up answer
        for sent in (struct.pack(">q", 0), struct.pack(">H", 0) + b"\0" * 32):
            got = await steal(port, sent)
            assert SECRET_BODY not in got and len(got) <= 37, got[:64]  # the challenge, nothing else
        assert master.ha.master.state.auth_refused >= 2
        assert master.ha.status().auth_refused >= 2  # GET_BROKER_HA_STATUS's haAuthRefused
        assert len(master.ha.master.state.links) == 1  # only the real slave


async def test_attack_a_slave_with_the_wrong_secret_gets_nothing(tmp_path: Path) -> None:
    async with (
        run_namesrv(tmp_path) as ns,
        pair(ns, tmp_path, {"haAuthSecret": "right-secret"}, {"haAuthSecret": "wrong-secret"}) as (master, slave),
    ):
        await put_some(master)
        assert master.ha is not None and master.ha.master is not None and slave.store is not None
        await until(lambda: master.ha is not None and master.ha.master is not None
                    and master.ha.master.state.auth_refused >= 1, what="the master refuses the slave")  # fmt: skip
        assert slave.store.commitlog.max_offset == 0 and not master.ha.master.state.links


async def test_acl_on_slaves_prove_an_admin_inner_account(tmp_path: Path) -> None:
    home = tmp_path / "home"
    write_acl(home)  # rocketmq2 admin, RocketMQ normal
    acl = {"aclEnable": True, "rocketmqHome": home}
    async with run_namesrv(tmp_path) as ns:
        admin = {"innerAccessKey": "rocketmq2", "innerSecretKey": "12345678"}
        async with pair(ns, tmp_path / "ok", {**acl, **admin}, admin) as (master, slave):
            end = await put_some(master)
            await replicated(master, slave, end)
            assert master.ha is not None and master.ha.master is not None
            got = await steal(master.ha.ha_port, struct.pack(">q", 0))
            assert SECRET_BODY not in got
        normal = {"innerAccessKey": "RocketMQ", "innerSecretKey": "12345678"}
        async with pair(ns, tmp_path / "no", {**acl, **admin}, normal) as (master, slave):
            await put_some(master)
            assert master.ha is not None and master.ha.master is not None and slave.store is not None
            await until(lambda: master.ha is not None and master.ha.master is not None
                        and master.ha.master.state.auth_refused >= 1, what="a non-admin account is refused")  # fmt: skip
            assert slave.store.commitlog.max_offset == 0


async def test_attack_plaintext_read_of_a_tls_masters_ha_stream(tmp_path: Path) -> None:
    pki = make_pki(tmp_path)
    server_tls = {"tls.server.certPath": pki["cert"], "tls.server.keyPath": pki["key"]}
    client_tls = {"tls.enable": True, "tls.client.authServer": True, "tls.client.trustCertPath": pki["ca"]}
    async with (
        run_namesrv(tmp_path, **{"tls.server.mode": "permissive", **server_tls}) as ns,
        pair(
            ns,
            tmp_path,
            {"tls.server.mode": "enforcing", "haAuthSecret": "tls-ha-secret", **server_tls},
            {"haAuthSecret": "tls-ha-secret", **client_tls},
        ) as (master, slave),
    ):
        end = await put_some(master)
        await replicated(master, slave, end)  # the slave dials the HA port over TLS
        assert master.ha is not None
        got = await steal(master.ha.ha_port, struct.pack(">q", 0))
        assert SECRET_BODY not in got and b"RQHA" not in got  # no TLS, no challenge, no bytes
