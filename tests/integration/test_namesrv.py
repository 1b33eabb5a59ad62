"""The name server over real sockets: brokers register with real REGISTER_BROKER frames from a RemotingClient,
clients fetch routes; golden GET_ROUTEINFO_BY_TOPIC frames of the C++ and ali-ons clients are replayed byte for
byte; bad input never stops the server; the ``python -m namesrv`` CLI behaves.

No fixed ports, no sleeps as synchronisation: waits are on events, or polls with a bounded deadline.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import struct
import subprocess
import sys
import zlib
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from protocol.codes import RequestCode, ResponseCode
from protocol.command import RemotingCommand
from protocol.frame import FrameDecoder
from protocol.remoting import RemotingClient
from tests.eventually import eventually
from tests.harness import run_namesrv

REPO = Path(__file__).resolve().parents[2]
GOLDEN = REPO.parent / "shared" / "reference" / "golden"
ROUTE_FRAMES = sorted(GOLDEN.glob("*_c2s_GET_ROUTEINFO_BY_TOPIC.bin"))
FAQ = "\nSee http://rocketmq.apache.org/docs/faq/ for further details."

A_MASTER, A_SLAVE, B_MASTER = "127.0.0.1:10911", "127.0.0.1:10921", "127.0.0.1:20911"


# -- helpers -----------------------------------------------------------------------------------------------------


def topic_config(name: str, queues: int, sys_flag: int = 0) -> dict[str, Any]:
    return {
        "topicName": name,
        "readQueueNums": queues,
        "writeQueueNums": queues,
        "perm": 6,
        "topicFilterType": "SINGLE_TAG",
        "topicSysFlag": sys_flag,
        "order": False,
    }


def register_body(
    topics: dict[str, int], version: tuple[int, int], compressed: bool, sys_flags: dict[str, int] | None = None
) -> bytes:
    """RegisterBrokerBody exactly as docs/reference/protocol.md §d describes it (built here, independently of protocol.bodies);
    ``topics`` is name → queue count, ``sys_flags`` name → topicSysFlag (plain body only)."""
    dv = {"timestamp": version[0], "counter": version[1]}
    if not compressed:
        flags = sys_flags or {}
        table = {name: topic_config(name, n, flags.get(name, 0)) for name, n in topics.items()}
        return json.dumps(
            {"topicConfigSerializeWrapper": {"topicConfigTable": table, "dataVersion": dv}, "filterServerList": []}
        ).encode()
    parts = [json.dumps(dv).encode()]
    raw = struct.pack(">i", len(parts[0])) + parts[0] + struct.pack(">i", len(topics))
    for name, n in topics.items():
        line = f"{name} {n} {n} 6 SINGLE_TAG".encode()
        raw += struct.pack(">i", len(line)) + line
    return zlib.compress(raw + struct.pack(">i", 2) + b"[]")


def register_cmd(
    cluster: str,
    name: str,
    addr: str,
    broker_id: int,
    topics: dict[str, int],
    *,
    version: tuple[int, int] = (1700000000000, 1),
    compressed: bool = False,
    crc: int | None = None,
    sys_flags: dict[str, int] | None = None,
) -> RemotingCommand:
    body = register_body(topics, version, compressed, sys_flags)
    host, port = addr.rsplit(":", 1)
    ext = {
        "brokerName": name,
        "brokerAddr": addr,
        "clusterName": cluster,
        "haServerAddr": f"{host}:{int(port) + 1}",
        "brokerId": str(broker_id),
        "compressed": "true" if compressed else "false",
        "bodyCrc32": str(zlib.crc32(body) & 0x7FFFFFFF if crc is None else crc),
    }
    return RemotingCommand.request(RequestCode.REGISTER_BROKER, ext, body)


def request(code: int, body: bytes = b"", **ext: str) -> RemotingCommand:
    return RemotingCommand.request(code, dict(ext), body)


async def get_route(client: RemotingClient, ns: str, topic: str) -> RemotingCommand:
    return await client.invoke(ns, request(RequestCode.GET_ROUTEINFO_BY_TOPIC, topic=topic))


async def topic_gone(client: RemotingClient, ns: str, topic: str) -> bool:
    return (await get_route(client, ns, topic)).code == ResponseCode.TOPIC_NOT_EXIST


async def read_frame(reader: asyncio.StreamReader) -> bytes:
    head = await asyncio.wait_for(reader.readexactly(4), 5)
    (length,) = struct.unpack(">i", head)
    return head + await asyncio.wait_for(reader.readexactly(length), 5)


# -- registration, routes, cluster info ----------------------------------------------------------------------------


@pytest.mark.asyncio
async def test_two_clusters_master_slave_routes_cluster_info_unregister(tmp_path: Path, client: RemotingClient) -> None:
    async with run_namesrv(tmp_path) as ns:
        broker_a, broker_b = RemotingClient(), RemotingClient()
        try:
            r = await broker_a.invoke(ns.addr, register_cmd("c1", "broker-a", A_MASTER, 0, {"T1": 4, "Shared": 8}))
            assert r.code == ResponseCode.SUCCESS and "masterAddr" not in r.ext_fields
            r = await broker_a.invoke(ns.addr, register_cmd("c1", "broker-a", A_SLAVE, 1, {"T1": 4, "Shared": 8}))
            assert r.code == ResponseCode.SUCCESS
            assert r.ext_fields == {"masterAddr": A_MASTER, "haServerAddr": "127.0.0.1:10912"}
            r = await broker_b.invoke(
                ns.addr, register_cmd("c2", "broker-b", B_MASTER, 0, {"T2": 2, "Shared": 2}, compressed=True)
            )
            assert r.code == ResponseCode.SUCCESS

            r = await get_route(client, ns.addr, "T1")
            assert r.code == ResponseCode.SUCCESS
            assert json.loads(r.body) == {
                "orderTopicConf": None,
                "queueDatas": [
                    {"brokerName": "broker-a", "readQueueNums": 4, "writeQueueNums": 4, "perm": 6, "topicSysFlag": 0}
                ],
                "brokerDatas": [
                    {"cluster": "c1", "brokerName": "broker-a", "brokerAddrs": {"0": A_MASTER, "1": A_SLAVE}}
                ],
                "filterServerTable": {},
            }
            shared = json.loads((await get_route(client, ns.addr, "Shared")).body)
            assert [q["brokerName"] for q in shared["queueDatas"]] == ["broker-a", "broker-b"]
            assert [q["writeQueueNums"] for q in shared["queueDatas"]] == [8, 2]

            r = await client.invoke(ns.addr, request(RequestCode.GET_BROKER_CLUSTER_INFO))
            info = json.loads(r.body)
            assert info["clusterAddrTable"] == {"c1": ["broker-a"], "c2": ["broker-b"]}
            assert info["brokerAddrTable"]["broker-a"]["brokerAddrs"] == {"0": A_MASTER, "1": A_SLAVE}
            assert info["brokerAddrTable"]["broker-b"] == {
                "cluster": "c2",
                "brokerName": "broker-b",
                "brokerAddrs": {"0": B_MASTER},
            }
            r = await client.invoke(ns.addr, request(RequestCode.GET_ALL_TOPIC_LIST_FROM_NAMESERVER))
            assert json.loads(r.body)["topicList"] == ["Shared", "T1", "T2"]
            r = await client.invoke(ns.addr, request(RequestCode.GET_TOPICS_BY_CLUSTER, cluster="c2"))
            assert json.loads(r.body)["topicList"] == ["Shared", "T2"]

            unreg = request(
                RequestCode.UNREGISTER_BROKER,
                brokerName="broker-b",
                brokerAddr=B_MASTER,
                clusterName="c2",
                brokerId="0",
            )
            assert (await broker_b.invoke(ns.addr, unreg)).code == ResponseCode.SUCCESS
            assert await topic_gone(client, ns.addr, "T2")
            shared = json.loads((await get_route(client, ns.addr, "Shared")).body)
            assert [b["brokerName"] for b in shared["brokerDatas"]] == ["broker-a"]
            info = json.loads((await client.invoke(ns.addr, request(RequestCode.GET_BROKER_CLUSTER_INFO))).body)
            assert info["clusterAddrTable"] == {"c1": ["broker-a"]}
        finally:
            await broker_a.close()
            await broker_b.close()


@pytest.mark.asyncio
async def test_admin_requests(tmp_path: Path, client: RemotingClient) -> None:
    async with run_namesrv(tmp_path) as ns:
        assert (await client.invoke(ns.addr, register_cmd("c1", "broker-a", A_MASTER, 0, {"T1": 4, "T2": 4}))).code == 0

        r = await client.invoke(ns.addr, request(RequestCode.WIPE_WRITE_PERM_OF_BROKER, brokerName="broker-a"))
        assert (r.code, r.ext_fields) == (ResponseCode.SUCCESS, {"wipeTopicCount": "2"})
        assert json.loads((await get_route(client, ns.addr, "T1")).body)["queueDatas"][0]["perm"] == 4
        r = await client.invoke(ns.addr, request(RequestCode.ADD_WRITE_PERM_OF_BROKER, brokerName="broker-a"))
        assert r.ext_fields == {"addTopicCount": "2"}
        assert json.loads((await get_route(client, ns.addr, "T1")).body)["queueDatas"][0]["perm"] == 6

        r = await client.invoke(ns.addr, request(RequestCode.DELETE_TOPIC_IN_NAMESRV, topic="T2", clusterName="c1"))
        assert r.code == ResponseCode.SUCCESS and await topic_gone(client, ns.addr, "T2")

        fields = {"brokerName": "broker-a", "brokerAddr": A_MASTER, "clusterName": "c1", "brokerId": "0"}
        same = request(RequestCode.QUERY_DATA_VERSION, b'{"timestamp":1700000000000,"counter":1}', **fields)
        r = await client.invoke(ns.addr, same)
        assert r.ext_fields == {"changed": "false"}
        assert json.loads(r.body) == {"counter": 1, "timestamp": 1700000000000}
        other = request(RequestCode.QUERY_DATA_VERSION, b'{"timestamp":1700000000000,"counter":2}', **fields)
        assert (await client.invoke(ns.addr, other)).ext_fields == {"changed": "true"}

        r = await client.invoke(ns.addr, request(RequestCode.GET_NAMESRV_CONFIG))
        assert "listenAddress=127.0.0.1\n" in r.body.decode()


@pytest.mark.asyncio
async def test_name_servers_share_nothing(tmp_path: Path, client: RemotingClient) -> None:
    async with run_namesrv(tmp_path / "a") as ns1, run_namesrv(tmp_path / "b") as ns2:
        assert (await client.invoke(ns1.addr, register_cmd("c1", "broker-a", A_MASTER, 0, {"T1": 1}))).code == 0
        assert (await get_route(client, ns1.addr, "T1")).code == ResponseCode.SUCCESS
        assert await topic_gone(client, ns2.addr, "T1")


# -- liveness ------------------------------------------------------------------------------------------------------


@pytest.mark.asyncio
async def test_silent_broker_expires_and_its_connection_is_closed(tmp_path: Path, client: RemotingClient) -> None:
    async with run_namesrv(tmp_path, scanNotActiveBrokerInterval=100, brokerChannelExpiredTime=1000) as ns:
        broker = RemotingClient()
        try:
            assert (await broker.invoke(ns.addr, register_cmd("c1", "broker-a", A_MASTER, 0, {"T1": 4}))).code == 0
            conn = await broker.get_connection(ns.addr)
            assert (await get_route(client, ns.addr, "T1")).code == ResponseCode.SUCCESS
            # The scan drops the broker, then closes its connection (as J does): wait for that close.
            await asyncio.wait_for(conn.closed_event.wait(), 10)
            assert await topic_gone(client, ns.addr, "T1")
            info = json.loads((await client.invoke(ns.addr, request(RequestCode.GET_BROKER_CLUSTER_INFO))).body)
            assert info == {"brokerAddrTable": {}, "clusterAddrTable": {}}
        finally:
            await broker.close()


@pytest.mark.asyncio
async def test_broker_dropped_when_its_connection_closes(tmp_path: Path, client: RemotingClient) -> None:
    async with run_namesrv(tmp_path) as ns:
        broker_a, broker_b = RemotingClient(), RemotingClient()
        try:
            assert (await broker_a.invoke(ns.addr, register_cmd("c1", "broker-a", A_MASTER, 0, {"T1": 4}))).code == 0
            assert (await broker_b.invoke(ns.addr, register_cmd("c2", "broker-b", B_MASTER, 0, {"T2": 4}))).code == 0
            # Re-registering over the same connection must not stack close callbacks or change anything.
            assert (await broker_a.invoke(ns.addr, register_cmd("c1", "broker-a", A_MASTER, 0, {"T1": 4}))).code == 0
            await broker_a.close()
            await eventually(lambda: topic_gone(client, ns.addr, "T1"))
            assert (await get_route(client, ns.addr, "T2")).code == ResponseCode.SUCCESS
        finally:
            await broker_a.close()
            await broker_b.close()


# -- KV config -----------------------------------------------------------------------------------------------------


@pytest.mark.asyncio
async def test_kv_round_trip_survives_restart(tmp_path: Path, client: RemotingClient) -> None:
    put = request(RequestCode.PUT_KV_CONFIG, namespace="ORDER_TOPIC_CONFIG", key="TopicOrder", value="broker-a:4")
    async with run_namesrv(tmp_path, orderMessageEnable=True) as ns:
        assert (await client.invoke(ns.addr, put)).code == ResponseCode.SUCCESS
        put2 = request(RequestCode.PUT_KV_CONFIG, namespace="app", key="gone", value="soon")
        assert (await client.invoke(ns.addr, put2)).code == ResponseCode.SUCCESS
        delete = request(RequestCode.DELETE_KV_CONFIG, namespace="app", key="gone")
        assert (await client.invoke(ns.addr, delete)).code == ResponseCode.SUCCESS
    client.close_connection(ns.addr)

    async with run_namesrv(tmp_path, orderMessageEnable=True) as ns:
        get = request(RequestCode.GET_KV_CONFIG, namespace="ORDER_TOPIC_CONFIG", key="TopicOrder")
        r = await client.invoke(ns.addr, get)
        assert (r.code, r.ext_fields) == (ResponseCode.SUCCESS, {"value": "broker-a:4"})
        r = await client.invoke(ns.addr, request(RequestCode.GET_KVLIST_BY_NAMESPACE, namespace="ORDER_TOPIC_CONFIG"))
        assert json.loads(r.body) == {"table": {"TopicOrder": "broker-a:4"}}

        r = await client.invoke(ns.addr, request(RequestCode.GET_KV_CONFIG, namespace="app", key="gone"))
        assert (r.code, r.remark) == (ResponseCode.QUERY_NOT_FOUND, "No config item, Namespace: app Key: gone")
        r = await client.invoke(ns.addr, request(RequestCode.GET_KVLIST_BY_NAMESPACE, namespace="nope"))
        assert (r.code, r.remark) == (ResponseCode.QUERY_NOT_FOUND, "No config item, Namespace: nope")

        # The ORDER_TOPIC_CONFIG namespace goes back to brokers and into routes (orderMessageEnable=true).
        r = await client.invoke(ns.addr, register_cmd("c1", "broker-a", A_MASTER, 0, {"TopicOrder": 4}))
        assert json.loads(r.body) == {"table": {"TopicOrder": "broker-a:4"}}
        assert json.loads((await get_route(client, ns.addr, "TopicOrder")).body)["orderTopicConf"] == "broker-a:4"


# -- golden frames from the official clients -----------------------------------------------------------------------


@pytest.mark.asyncio
@pytest.mark.parametrize("frame_path", ROUTE_FRAMES, ids=[p.stem for p in ROUTE_FRAMES])
async def test_golden_route_request_replayed_byte_for_byte(
    tmp_path: Path, client: RemotingClient, frame_path: Path
) -> None:
    raw = frame_path.read_bytes()
    decoder = FrameDecoder()
    decoder.feed(raw)
    req = decoder.next_frame()
    assert req is not None and req.code == RequestCode.GET_ROUTEINFO_BY_TOPIC
    topic = req.ext_fields["topic"]

    async with run_namesrv(tmp_path) as ns:
        reg = register_cmd("DefaultCluster", "broker-a", A_MASTER, 0, {topic: 4})
        assert (await client.invoke(ns.addr, reg)).code == ResponseCode.SUCCESS
        reader, writer = await asyncio.open_connection("127.0.0.1", ns.port)
        try:
            writer.write(raw)  # exactly the bytes the official client sent
            await writer.drain()
            reply = await read_frame(reader)
        finally:
            writer.close()

    (length, word) = struct.unpack_from(">iI", reply)
    assert length == len(reply) - 4
    assert word >> 24 == 0, "C++ and ali-ons read the whole word as the header length: top byte must be 0 (JSON)"
    header = json.loads(reply[8 : 8 + word])
    body = reply[8 + word :]
    assert header["code"] == ResponseCode.SUCCESS
    assert header["opaque"] == req.opaque
    assert header["flag"] & 1
    assert all(isinstance(v, str) for v in header.get("extFields", {}).values())

    assert b'"brokerAddrs":{"0":"127.0.0.1:10911"}' in body  # quoted broker-id keys
    route = json.loads(body)  # strict standard JSON
    assert route["queueDatas"] == [
        {"brokerName": "broker-a", "readQueueNums": 4, "writeQueueNums": 4, "perm": 6, "topicSysFlag": 0}
    ]
    assert route["brokerDatas"] == [
        {"cluster": "DefaultCluster", "brokerName": "broker-a", "brokerAddrs": {"0": "127.0.0.1:10911"}}
    ]
    assert route["filterServerTable"] == {}


def test_golden_frames_are_present() -> None:
    cpp = [p for p in ROUTE_FRAMES if p.name.startswith("cpp_")]
    alions = [p for p in ROUTE_FRAMES if p.name.startswith("alions_")]
    assert cpp and alions, f"golden GET_ROUTEINFO_BY_TOPIC frames missing under {GOLDEN}"


# -- bad input: each case answered (or the connection dropped) while another client keeps being served -----------


@pytest_asyncio.fixture
async def serving(tmp_path: Path) -> AsyncIterator[tuple[str, Callable[[], Awaitable[None]]]]:
    """A name server with one registered topic, and a check that a separate client is still served."""
    async with run_namesrv(tmp_path) as ns:
        bystander = RemotingClient()
        try:
            assert (await bystander.invoke(ns.addr, register_cmd("c1", "broker-a", A_MASTER, 0, {"Live": 1}))).code == 0

            async def still_serving() -> None:
                assert (await get_route(bystander, ns.addr, "Live")).code == ResponseCode.SUCCESS

            yield ns.addr, still_serving
        finally:
            await bystander.close()


@pytest.mark.asyncio
async def test_unknown_topic(serving: tuple[str, Callable[[], Awaitable[None]]], client: RemotingClient) -> None:
    addr, still_serving = serving
    r = await get_route(client, addr, "NoSuchTopic")
    assert (r.code, r.remark) == (
        ResponseCode.TOPIC_NOT_EXIST,
        f"No topic route info in name server for the topic: NoSuchTopic{FAQ}",
    )
    await still_serving()


@pytest.mark.asyncio
@pytest.mark.parametrize(
    ("cmd", "code", "remark_part"),
    [
        (
            RemotingCommand.request(
                RequestCode.REGISTER_BROKER,
                {"brokerName": "b", "brokerAddr": "1.1.1.1:1", "clusterName": "c", "haServerAddr": "", "brokerId": "0"},
                b'{"topicConfigSerializeWrapper": [oops',
            ),
            ResponseCode.SYSTEM_ERROR,
            "Failed to decode RegisterBrokerBody",
        ),
        (
            RemotingCommand.request(
                RequestCode.REGISTER_BROKER,
                {
                    "brokerName": "b",
                    "brokerAddr": "1.1.1.1:1",
                    "clusterName": "c",
                    "haServerAddr": "",
                    "brokerId": "0",
                    "compressed": "true",
                },
                b"not zlib at all",
            ),
            ResponseCode.SYSTEM_ERROR,
            "not a zlib stream",
        ),
        (
            RemotingCommand.request(
                RequestCode.REGISTER_BROKER, {"brokerAddr": "1.1.1.1:1", "clusterName": "c", "brokerId": "0"}
            ),
            ResponseCode.SYSTEM_ERROR,
            "the custom field <brokerName> is null",
        ),
        (
            register_cmd("c", "b", "1.1.1.1:1", 0, {"T": 1}, crc=12345),
            ResponseCode.SYSTEM_ERROR,
            "crc32 not match",
        ),
        (request(RequestCode.GET_ROUTEINFO_BY_TOPIC), ResponseCode.SYSTEM_ERROR, "the custom field <topic> is null"),
        (
            request(RequestCode.UPDATE_NAMESRV_CONFIG, b"kvConfigPath=/etc/cron.d/evil\n"),
            ResponseCode.NO_PERMISSION,
            "Can not update config path: kvConfigPath",
        ),
        (
            request(RequestCode.UPDATE_NAMESRV_CONFIG, b"listenPort=1\n"),
            ResponseCode.NO_PERMISSION,
            "listenPort can not be changed at runtime",
        ),
        (request(9999), ResponseCode.REQUEST_CODE_NOT_SUPPORTED, "request type 9999 not supported"),
    ],
    ids=[
        "malformed-body",
        "bad-compressed",
        "missing-field",
        "bad-crc",
        "no-topic",
        "path-update",
        "key-update",
        "unknown-code",
    ],
)
async def test_bad_requests_are_answered(
    serving: tuple[str, Callable[[], Awaitable[None]]],
    client: RemotingClient,
    cmd: RemotingCommand,
    code: int,
    remark_part: str,
) -> None:
    addr, still_serving = serving
    r = await client.invoke(addr, cmd)
    assert r.code == code
    assert remark_part in (r.remark or "")
    await still_serving()
    # The same connection keeps working too.
    assert (await get_route(client, addr, "Live")).code == ResponseCode.SUCCESS


@pytest.mark.asyncio
async def test_config_path_is_never_changed(tmp_path: Path, client: RemotingClient) -> None:
    async with run_namesrv(tmp_path) as ns:
        before = ns.config.kv_config_path
        body = b"orderMessageEnable=true\nconfigStorePath=/tmp/evil\n"
        r = await client.invoke(ns.addr, request(RequestCode.UPDATE_NAMESRV_CONFIG, body))
        assert r.code == ResponseCode.NO_PERMISSION and "configStorePath" in (r.remark or "")
        assert not ns.config.order_message_enable  # all or nothing
        r = await client.invoke(ns.addr, request(RequestCode.UPDATE_NAMESRV_CONFIG, b"orderMessageEnable=true\n"))
        assert r.code == ResponseCode.SUCCESS and ns.config.order_message_enable
        assert ns.config.kv_config_path == before
        text = (await client.invoke(ns.addr, request(RequestCode.GET_NAMESRV_CONFIG))).body.decode()
        assert "orderMessageEnable=true\n" in text and f"kvConfigPath={before}\n" in text
        assert not Path("/tmp/evil").exists()


@pytest.mark.asyncio
@pytest.mark.parametrize(
    "garbage",
    [
        b"\x00\x00\x00\x08\x07\x00\x00\x00garbage!",  # unknown serialize type 7
        b"\x00\x00\x00\x0c\x00\x00\x00\x08not json",  # JSON type, header is not JSON
        b"\x7f\xff\xff\xff",  # declares a 2 GiB frame
        b"\x00\x00\x00\x04\x00\x00\x01\x00",  # header length beyond the frame
    ],
    ids=["bad-type", "bad-json", "too-large", "bad-header-length"],
)
async def test_garbage_frame_closes_only_that_connection(
    serving: tuple[str, Callable[[], Awaitable[None]]], garbage: bytes
) -> None:
    addr, still_serving = serving
    host, port = addr.rsplit(":", 1)
    reader, writer = await asyncio.open_connection(host, int(port))
    try:
        writer.write(garbage)
        await writer.drain()
        try:
            rest = await asyncio.wait_for(reader.read(), 5)  # EOF once the server drops us
        except ConnectionResetError:
            rest = b""
        assert rest == b""
    finally:
        writer.close()
    await still_serving()


# -- the CLI -------------------------------------------------------------------------------------------------------


def _cli(tmp_path: Path, *args: str, timeout: float = 30) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "namesrv", *args],
        check=False,
        cwd=REPO,
        env=_cli_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def _cli_env(tmp_path: Path) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(REPO), "HOME": str(tmp_path)}


def test_cli_bad_config_key(tmp_path: Path) -> None:
    conf = tmp_path / "bad.conf"
    conf.write_text("# a comment\nlistenPort=9876\nlistenPortt=1\n")
    proc = _cli(tmp_path, "-c", str(conf))
    assert proc.returncode != 0
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert "listenPortt" in lines[0] and "line 3" in lines[0]
    assert "Traceback" not in proc.stderr


def test_cli_bad_config_value(tmp_path: Path) -> None:
    conf = tmp_path / "bad.conf"
    conf.write_text("listenPort=abc\n")
    proc = _cli(tmp_path, "-c", str(conf))
    assert proc.returncode != 0
    assert proc.stderr.strip().splitlines() == [f"mqnamesrv: {conf} line 1: listenPort=abc is not a valid integer"]


def test_cli_port_in_use(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        conf = tmp_path / "ns.conf"
        conf.write_text(f"listenAddress=127.0.0.1\nlistenPort={port}\nkvConfigPath={tmp_path / 'kv.json'}\n")
        proc = _cli(tmp_path, "-c", str(conf))
    assert proc.returncode != 0
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert f"cannot listen on 127.0.0.1:{port}" in lines[0] and "in use" in lines[0]


def test_cli_print_config(tmp_path: Path) -> None:
    proc = _cli(tmp_path, "-p")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert "listenPort=9876" in lines
    assert f"kvConfigPath={tmp_path / 'namesrv' / 'kvConfig.json'}" in lines
    assert all("=" in line for line in lines)
    conf = tmp_path / "ns.conf"
    conf.write_text("listenPort: 9999\n")
    assert "listenPort=9999" in _cli(tmp_path, "-c", str(conf), "-p", "-n", "127.0.0.1:9876").stdout.splitlines()


@pytest.mark.asyncio
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
async def test_cli_serves_and_stops_cleanly_on_signal(tmp_path: Path, sig: signal.Signals) -> None:
    conf = tmp_path / "ns.conf"
    conf.write_text(f"listenAddress=127.0.0.1\nlistenPort=0\nkvConfigPath={tmp_path / 'kv.json'}\n")
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "namesrv", "-c", str(conf),
        cwd=REPO, env=_cli_env(tmp_path), stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    try:
        assert proc.stdout is not None
        line = await asyncio.wait_for(proc.stdout.readline(), 30)
        assert b"The Name Server boot success" in line
        proc.send_signal(sig)
        _out, err = await asyncio.wait_for(proc.communicate(), 30)
        assert proc.returncode == 0, err.decode()
        assert b"Traceback" not in err
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()


async def test_idle_connections_are_closed_after_server_channel_max_idle_time(tmp_path: Path) -> None:
    async with run_namesrv(tmp_path, serverChannelMaxIdleTimeSeconds=1) as ns:
        host, port = ns.addr.rsplit(":", 1)
        reader, writer = await asyncio.open_connection(host, int(port))
        async with asyncio.timeout(10):
            assert await reader.read() == b""  # closed by the name server, nothing sent
        writer.close()
