"""Name-server accounts: the REGISTER_BROKER hijack and the other write codes need a signed admin account, route reads
stay open to unsigned clients, and a broker with ``innerAccessKey`` registers."""

from __future__ import annotations

from pathlib import Path

from protocol.codes import RequestCode, ResponseCode
from protocol.command import RemotingCommand
from protocol.remoting import RemotingClient
from tests.eventually import eventually
from tests.harness import run_broker, run_namesrv
from tests.integration.acl_support import ADMIN, NORMAL, refused, signed, write_acl
from tests.integration.test_namesrv import register_cmd


def _route(topic: str) -> RemotingCommand:
    return RemotingCommand.request(RequestCode.GET_ROUTEINFO_BY_TOPIC, {"topic": topic})


async def test_hijack_refused_routes_open(tmp_path: Path) -> None:
    home = tmp_path / "home"
    write_acl(home)
    async with (
        run_namesrv(tmp_path, aclEnable=True, rocketmqHome=home) as ns,
        run_broker(ns, tmp_path, innerAccessKey=ADMIN.access_key, innerSecretKey=ADMIN.secret_key) as broker,
    ):
        assert broker.registrar is not None
        await eventually(lambda: broker.registrar is not None and broker.registrar.registrations > 0)
        client = RemotingClient()
        try:
            # the attacker re-registers broker-a at its own address: unsigned, then with a non-admin account
            for creds in (None, NORMAL):
                hijack = register_cmd("DefaultCluster", "broker-a", "6.6.6.6:10911", 0, {"TopicTest": 4})
                r = await client.invoke(ns.addr, signed(hijack, creds), 5.0)
                assert refused(r), r.remark
            writes = [
                RemotingCommand.request(
                    RequestCode.PUT_KV_CONFIG, {"namespace": "ORDER_TOPIC_CONFIG", "key": "T", "value": "broker-a:4"}
                ),
                RemotingCommand.request(RequestCode.DELETE_KV_CONFIG, {"namespace": "ORDER_TOPIC_CONFIG", "key": "T"}),
                RemotingCommand.request(RequestCode.WIPE_WRITE_PERM_OF_BROKER, {"brokerName": "broker-a"}),
                RemotingCommand.request(RequestCode.ADD_WRITE_PERM_OF_BROKER, {"brokerName": "broker-a"}),
                RemotingCommand.request(RequestCode.DELETE_TOPIC_IN_NAMESRV, {"topic": "TBW102"}),
                RemotingCommand.request(RequestCode.UPDATE_NAMESRV_CONFIG, {}, b"orderMessageEnable=true"),
                RemotingCommand.request(
                    RequestCode.UNREGISTER_BROKER,
                    {
                        "brokerName": "broker-a",
                        "brokerAddr": broker.addr,
                        "clusterName": "DefaultCluster",
                        "brokerId": "0",
                    },
                ),
            ]
            for cmd in writes:
                r = await client.invoke(ns.addr, cmd, 5.0)
                assert refused(r) and "No accessKey is configured" in (r.remark or ""), cmd.code
            # route reads are open and still point at the real broker
            r = await client.invoke(ns.addr, _route("TBW102"), 5.0)
            assert r.code == ResponseCode.SUCCESS and broker.addr in r.body.decode()
            assert "6.6.6.6" not in r.body.decode()
            assert ns.kv_config.get("ORDER_TOPIC_CONFIG", "T") is None
            # an admin account may write
            r = await client.invoke(
                ns.addr,
                signed(
                    RemotingCommand.request(RequestCode.PUT_KV_CONFIG, {"namespace": "N", "key": "k", "value": "v"}),
                    ADMIN,
                ),
                5.0,
            )
            assert r.code == ResponseCode.SUCCESS, r.remark
        finally:
            await client.close()


async def test_unsigned_broker_cannot_register(tmp_path: Path) -> None:
    home = tmp_path / "home"
    write_acl(home)
    async with run_namesrv(tmp_path, aclEnable=True, rocketmqHome=home) as ns, run_broker(ns, tmp_path) as broker:
        client = RemotingClient()
        try:
            r = await client.invoke(ns.addr, _route("TBW102"), 5.0)
            assert r.code == ResponseCode.TOPIC_NOT_EXIST
            assert broker.registrar is not None and broker.registrar.registrations == 0
        finally:
            await client.close()


async def test_acl2_users_on_the_name_server(tmp_path: Path) -> None:
    """ACL 2.0 users in the shared ``rocketmqHome`` (``conf/auth.json``) are checked by the name server too: a Super
    user may write, a Normal user gets RocketMQ 5.3's NO_PERMISSION."""
    from protocol.acl.signature import SessionCredentials
    from runtime.acl.auth2 import save_doc

    home = tmp_path / "home"
    write_acl(home)
    users = [
        {"username": "root5", "password": "root5-pass", "userType": "Super", "userStatus": "enable"},
        {"username": "app5", "password": "app5-pass", "userType": "Normal", "userStatus": "enable"},
    ]
    save_doc(home, {"users": users, "acls": []})
    async with run_namesrv(tmp_path, aclEnable=True, rocketmqHome=home) as ns:
        client = RemotingClient()
        try:

            def put() -> RemotingCommand:
                ext = {"namespace": "ORDER_TOPIC_CONFIG", "key": "T5", "value": "broker-a:4"}
                return RemotingCommand.request(RequestCode.PUT_KV_CONFIG, ext)

            r = await client.invoke(ns.addr, signed(put(), SessionCredentials("app5", "app5-pass")), 5.0)
            assert r.code == ResponseCode.NO_PERMISSION and "Need admin permission" in (r.remark or ""), r.remark
            r = await client.invoke(ns.addr, signed(put(), SessionCredentials("root5", "root5-pass")), 5.0)
            assert r.code == ResponseCode.SUCCESS, r.remark
        finally:
            await client.close()
