"""Our SDK and mqadmin with ACL credentials: a PUB|SUB account produces and consumes; a wrong secret, no credentials,
a DENY topic and a SUB-only account are refused with J's AclException remark; mqadmin signs from flags or
``conf/tools.yml`` and manages accounts (codes 50-54) with the files rewritten in place."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from client import ConsumeResult, Message, Producer, PushConsumer
from client.errors import MQClientError
from protocol.errors import RemotingError
from protocol.message_ext import MessageExt
from tests.eventually import eventually
from tests.harness import run_broker, run_namesrv
from tests.integration.acl_support import ACL_EXC, write_acl

REPO = Path(__file__).resolve().parents[2]


async def mqadmin(*args: str, home: Path | None = None) -> tuple[int, str, str]:
    env = {"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"}
    if home is not None:
        env["ROCKETMQ_HOME"] = str(home)
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "client.admin",
        *args,
        cwd=str(REPO),
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    out, err = await proc.communicate()
    return proc.returncode or 0, out.decode(), err.decode()


async def test_sdk_with_credentials(tmp_path: Path) -> None:
    home = tmp_path / "home"
    write_acl(home)
    async with (
        run_namesrv(tmp_path) as ns,
        run_broker(
            ns, tmp_path, aclEnable=True, rocketmqHome=home, innerAccessKey="rocketmq2", innerSecretKey="12345678"
        ) as broker,
    ):
        good = {"access_key": "RocketMQ", "secret_key": "12345678"}
        async with Producer("PG_acl", ns.addr, **good) as p:
            for i in range(5):
                await p.send(Message("topicA", f"m{i}".encode()))
        refused = [
            ("topicA", {"access_key": "RocketMQ", "secret_key": "wrongSecret"}, "Check signature failed"),
            ("topicA", {}, "No accessKey is configured"),
            ("topicD", good, "No default permission for topic:topicD"),
            (
                "topicA",
                {"access_key": "subOnlyKey", "secret_key": "12345678"},
                "No default permission for topic:topicA",
            ),
        ]
        for topic, creds, reason in refused:
            async with Producer("PG_acl2", ns.addr, retry_times_when_send_failed=0, **creds) as p:
                with pytest.raises((RemotingError, MQClientError)) as info:
                    await p.send(Message(topic, b"never"))
                assert ACL_EXC in str(info.value) and reason in str(info.value)
        seen: list[bytes] = []

        def on_msgs(msgs: list[MessageExt]) -> ConsumeResult:
            seen.extend(m.body for m in msgs)
            return ConsumeResult.SUCCESS

        c = PushConsumer("groupA", ns.addr, consume_from_where="CONSUME_FROM_FIRST_OFFSET", **good)
        c.subscribe("topicA", "*", on_msgs)
        async with c:
            await eventually(lambda: len(seen) >= 5, timeout=30)
        assert sorted(seen) == [f"m{i}".encode() for i in range(5)]  # nothing refused was stored
        assert broker.acl is not None


async def test_mqadmin_acl_commands(tmp_path: Path) -> None:
    home = tmp_path / "home"
    write_acl(home)
    async with run_namesrv(tmp_path) as ns, run_broker(ns, tmp_path, aclEnable=True, rocketmqHome=home) as broker:
        addr = broker.addr
        # unsigned: refused (J sends unsigned when tools.yml is missing)
        rc, _out, err = await mqadmin("updateAclConfig", "-n", ns.addr, "-b", addr, "-a", "newUser1", "-s", "87654321")
        assert rc != 0 and "No accessKey is configured" in err
        # flags
        rc, out, err = await mqadmin(
            "updateAclConfig",
            "-n",
            ns.addr,
            "-b",
            addr,
            "-a",
            "newUser1",
            "-s",
            "87654321",
            "-t",
            "topicN=PUB|SUB",
            "-i",
            "DENY",
            "-u",
            "SUB",
            "--accessKey",
            "rocketmq2",
            "--secretKey",
            "12345678",
        )
        assert rc == 0, err
        assert f"create or update plain access config to {addr} success." in out
        data = yaml.safe_load((home / "conf" / "plain_acl.yml").read_text())
        new = next(a for a in data["accounts"] if a["accessKey"] == "newUser1")
        assert new["topicPerms"] == ["topicN=PUB|SUB"] and data["dataVersion"][0]["counter"] == 1
        # the new account works at once
        async with Producer("PG_new", ns.addr, access_key="newUser1", secret_key="87654321") as p:
            await p.send(Message("topicN", b"x"))
        # tools.yml
        (home / "conf" / "tools.yml").write_text("accessKey: rocketmq2\nsecretKey: 12345678\n")
        rc, out, err = await mqadmin("clusterAclConfigVersion", "-n", ns.addr, "-b", addr, home=home)
        assert rc == 0, err
        assert "plain_acl.yml" in out and "get cluster's plain access config version success." in out
        rc, out, err = await mqadmin("updateGlobalWhiteAddr", "-n", ns.addr, "-b", addr, "-g", "10.10.103.*", home=home)
        assert rc == 0 and f"update global white remote addresses to {addr} success." in out, err
        rc, out, err = await mqadmin("getAclConfig", "-n", ns.addr, "-b", addr, home=home)
        assert rc == 0, err
        assert "10.10.103.*" in out and "newUser1" in out and "87654321" not in out  # secrets redacted
        rc, out, err = await mqadmin("deleteAclConfig", "-n", ns.addr, "-b", addr, "-a", "newUser1", home=home)
        assert rc == 0 and "account's accesskey is:newUser1" in out, err
        data = yaml.safe_load((home / "conf" / "plain_acl.yml").read_text())
        assert all(a["accessKey"] != "newUser1" for a in data["accounts"])
        assert data["globalWhiteRemoteAddresses"] == ["10.10.103.*"]
        # a bad perm is refused with J's code and remark
        rc, _out, err = await mqadmin(
            "updateAclConfig", "-n", ns.addr, "-b", addr, "-a", "newUser2", "-s", "87654321", "-i", "ALL", home=home
        )
        assert rc != 0 and "The expected permissions are" in err


async def test_transaction_commit_is_signed(tmp_path: Path) -> None:
    """END_TRANSACTION is oneway: an unsigned one would be dropped silently and the half message never committed."""
    from client import LocalTransactionState, PullConsumer

    home = tmp_path / "home"
    write_acl(home)
    good = {"access_key": "RocketMQ", "secret_key": "12345678"}
    async with run_namesrv(tmp_path) as ns, run_broker(ns, tmp_path, aclEnable=True, rocketmqHome=home) as broker:
        async with Producer("PG_tx_acl", ns.addr, **good) as p:
            _r, state = await p.send_message_in_transaction(
                Message("topicA", b"committed"), lambda m, a: LocalTransactionState.COMMIT_MESSAGE
            )
            assert state is LocalTransactionState.COMMIT_MESSAGE
        c = PullConsumer("groupA", ns.addr, consume_from_where="FIRST_OFFSET", **good)
        c.subscribe("topicA", "*")
        got: list[bytes] = []
        async with c:

            async def arrived() -> bool:
                got.extend(m.body for m in await c.poll(timeout=1.0))
                return bool(got)

            await eventually(arrived, timeout=20)
        assert got == [b"committed"]
        assert broker.acl is not None and broker.acl.hook.denied == 0
