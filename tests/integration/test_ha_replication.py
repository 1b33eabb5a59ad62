"""Master/slave replication in-process on port 0: roles and config refusals, the name server's register reply, the
HA byte protocol copying 10,000 messages byte for byte with the slave's own consume queues and index, SYNC_MASTER
waits and their failure codes, SlaveSynchronize, and the pull-side slave behaviour."""

from __future__ import annotations

import asyncio
import json
import shutil
from pathlib import Path

import pytest

from broker.config import ConfigError, load_config
from broker.services.subscription_groups import SubscriptionGroupConfig
from client import Message, Producer, SendStatus
from client.admin.admin_client import AdminClient
from protocol.bodies import TopicConfig
from protocol.codes import RequestCode, ResponseCode
from protocol.headers import PullMessageRequestHeader, QueryMessageRequestHeader, SendMessageRequestHeader
from protocol.record_decode import decode_records
from tests.harness import run_broker, run_namesrv
from tests.integration.client_support import until
from tests.integration.ha_support import log_bytes, queue_units, run_pair

TOPIC = "TopicHA"


def test_slave_with_broker_id_0_does_not_start(tmp_path: Path) -> None:
    conf = tmp_path / "slave.conf"
    conf.write_text("brokerName=b\nbrokerRole=SLAVE\nbrokerId=0\n")
    with pytest.raises(ConfigError, match=r"SLAVE.*brokerId > 0"):
        load_config(conf)
    with pytest.raises(ConfigError, match=r"^brokerRole=slave"):
        load_config(None, {"brokerRole": "slave"})  # case-sensitive, as J's BrokerRole.valueOf


def test_ha_listen_port_defaults_to_listen_port_plus_one() -> None:
    assert load_config(None, {"listenPort": 10911}).ha_listen_port == 10912
    assert load_config(None, {"listenPort": 20911}).ha_listen_port == 20912
    assert load_config(None, {"listenPort": 0}).ha_listen_port == 0
    assert load_config(None, {"listenPort": 20911, "haListenPort": 0}).ha_listen_port == 0


async def test_slave_refuses_writes_and_learns_its_master(tmp_path: Path) -> None:
    async with run_namesrv(tmp_path) as ns, run_pair(ns, tmp_path) as (master, slave):
        assert master.ha is not None and slave.ha is not None and slave.ha.slave is not None
        # the name server's REGISTER_BROKER reply gave the slave the master's advertised HA and remoting address
        await until(lambda: slave.ha.slave.state.master_addr == master.addr, what="slave learns masterAddr")
        assert slave.ha.slave.state.master_ha_addr == f"127.0.0.1:{master.ha.ha_port}"
        assert master.ha.ha_port != 0
        async with AdminClient(ns.addr) as admin:
            h = SendMessageRequestHeader("PG", "TBW102", "NewTopicOnSlave", 4, -1, 0, 0, 0, "", 0, False)
            resp = await admin.call(
                slave.addr, RequestCode.SEND_MESSAGE, h.to_ext_fields(), b"x", ok=(ResponseCode.SERVICE_NOT_AVAILABLE,)
            )
            assert resp.remark is not None and "messages are put to the slave" in resp.remark
            assert slave.topics.get("NewTopicOnSlave") is None  # refused before any auto-create
            status = json.loads((await admin.call(slave.addr, RequestCode.GET_BROKER_HA_STATUS)).body)
            assert status["master"] is False and status["haClientRuntimeInfo"]["masterAddr"].endswith(
                str(master.ha.ha_port)
            )


async def test_10000_messages_replicated_byte_for_byte(tmp_path: Path) -> None:
    async with run_namesrv(tmp_path) as ns, run_pair(ns, tmp_path) as (master, slave):
        master.topics.put(TopicConfig.with_queues(TOPIC, 4))
        async with Producer("PG_ha", namesrv_addr=ns.addr) as p:
            sem = asyncio.Semaphore(64)

            async def one(i: int) -> None:
                async with sem:
                    r = await p.send(Message(TOPIC, b"m%05d" % i, tags=f"T{i % 3}", keys=[f"key-{i}"]))
                    assert r.send_status is SendStatus.SEND_OK

            await asyncio.gather(*(one(i) for i in range(10_000)))
        end = master.store.commitlog.max_offset
        assert master.store is not None and slave.store is not None
        await until(lambda: slave.store.commitlog.max_offset >= end, timeout=60, what="slave catches up")
        start = master.store.commitlog.min_offset
        assert slave.store.commitlog.min_offset == start
        assert log_bytes(slave.store, start, end) == log_bytes(master.store, start, end)
        for qid in range(4):
            assert queue_units(slave.store, TOPIC, qid) == queue_units(master.store, TOPIC, qid)
        total = sum(len(queue_units(slave.store, TOPIC, q)) for q in range(4))
        assert total == 10_000
        assert slave.ha is not None and slave.ha.sync is not None
        await until(slave.ha.sync.sync_all, what="slave copies the topic config")  # J's 10 s SlaveSynchronize
        async with AdminClient(ns.addr) as admin:
            # pulls from the slave return what the master returns
            for qid in range(4):
                h = PullMessageRequestHeader("CG_ha", TOPIC, qid, 0, 32, 0x4, 0, 0, 0, "*")
                ext = h.to_ext_fields()
                on_master = await admin.call(master.addr, RequestCode.PULL_MESSAGE, ext)
                on_slave = await admin.call(slave.addr, RequestCode.PULL_MESSAGE, ext)
                assert on_slave.body == on_master.body and len(decode_records(on_slave.body)) == 32
            # queryMsgByKey against the slave
            q = QueryMessageRequestHeader(TOPIC, "key-4242", 32, 0, 2**62, False).to_ext_fields()
            resp = await admin.call(slave.addr, RequestCode.QUERY_MESSAGE, q)
            [msg] = decode_records(resp.body)
            assert msg.body == b"m04242" and msg.keys == ["key-4242"]
            # the master sees the slave's ack; brokerStatus shows the lag
            await until(lambda: master.ha.master.state.push2slave_max >= end, what="master sees the ack")
            rt = json.loads((await admin.call(master.addr, RequestCode.GET_BROKER_RUNTIME_INFO)).body)["table"]
            assert rt["brokerRole"] == "ASYNC_MASTER" and rt["haSlaveCount"] == "1"
            assert (
                int(rt["haSlaveBehindBytes"])
                == master.store.commitlog.max_offset - master.ha.master.state.push2slave_max
            )


async def test_sync_master_waits_for_the_slave_and_reports_its_absence(tmp_path: Path) -> None:
    async with run_namesrv(tmp_path) as ns:
        async with run_pair(ns, tmp_path, role="SYNC_MASTER", slaveTimeout=1000) as (master, slave):
            master.topics.put(TopicConfig.with_queues(TOPIC, 4))
            assert master.ha is not None and master.ha.master is not None
            await until(lambda: master.ha.master.state.links, what="slave connects")
            async with Producer("PG_sync", namesrv_addr=ns.addr) as p:
                results = await asyncio.gather(*(p.send(Message(TOPIC, b"s%d" % i)) for i in range(200)))
            assert {r.send_status for r in results} == {SendStatus.SEND_OK}
            # acknowledged means on the slave
            assert slave.store is not None and master.store is not None
            assert slave.store.commitlog.max_offset >= max(int(r.offset_msg_id[16:], 16) for r in results)
            # the slave stops replicating: SYNC sends time out with FLUSH_SLAVE_TIMEOUT (stored, not confirmed)
            assert slave.ha is not None and slave.ha.slave is not None
            await slave.ha.slave.stop()
            async with Producer("PG_sync2", namesrv_addr=ns.addr) as p:
                r = await p.send(Message(TOPIC, b"late"))
            assert r.send_status in (SendStatus.FLUSH_SLAVE_TIMEOUT, SendStatus.SLAVE_NOT_AVAILABLE)
        # no slave at all: SLAVE_NOT_AVAILABLE at once
        async with run_broker(
            ns, tmp_path, brokerRole="SYNC_MASTER", brokerName="lonely", storePathRootDir=tmp_path / "lonely"
        ) as lonely:
            lonely.topics.put(TopicConfig.with_queues("TopicLonely", 1))
            async with Producer("PG_lonely", namesrv_addr=ns.addr) as p:
                r = await p.send(Message("TopicLonely", b"x"))
            assert r.send_status is SendStatus.SLAVE_NOT_AVAILABLE


async def test_slave_synchronize_copies_metadata(tmp_path: Path) -> None:
    async with run_namesrv(tmp_path) as ns, run_pair(ns, tmp_path) as (master, slave):
        master.topics.put(TopicConfig.with_queues("TopicMeta", 3))
        master.groups.put(SubscriptionGroupConfig("CG_meta", retry_max_times=5))
        master.offsets.commit("CG_meta", "TopicMeta", 1, 42)
        assert slave.ha is not None and slave.ha.sync is not None
        await until(slave.ha.sync.sync_all, what="one metadata sync round")
        tc = slave.topics.get("TopicMeta")
        assert tc is not None and tc.write_queue_nums == 3
        g = slave.groups.get("CG_meta")
        assert g is not None and g.retry_max_times == 5
        assert slave.offsets.query("CG_meta", "TopicMeta", 1) == 42
        await slave.topics.flush()
        await slave.offsets.flush()
        cfg = Path(slave.config.store.config_dir)
        assert "TopicMeta" in (cfg / "topics.json").read_text()
        assert "CG_meta" in (cfg / "consumerOffset.json").read_text()


async def test_mqadmin_shows_roles_and_lag(tmp_path: Path) -> None:
    from tests.integration.test_mqadmin import mqadmin

    async with run_namesrv(tmp_path) as ns, run_pair(ns, tmp_path) as (master, slave):
        assert master.ha is not None and master.ha.master is not None
        await until(lambda: master.ha.master.state.links, what="slave connects")
        rc, out, err = await mqadmin("clusterList", "-n", ns.addr)
        assert rc == 0, err
        rows = {line.split()[3]: line.split() for line in out.splitlines()[1:] if line.strip()}
        # J's ten columns, then #Role #HAState #Behind(bytes) last
        assert rows[master.addr][2] == "0" and rows[master.addr][-3] == "ASYNC_MASTER"
        assert rows[slave.addr][2] == "1" and rows[slave.addr][-3] == "SLAVE" and rows[slave.addr][-1].isdigit()
        rc, out, err = await mqadmin("haStatus", "-n", ns.addr, "-b", master.addr)
        assert rc == 0, err
        assert "#InSyncSlaveNums: 1" in out and "#SlaveAddr" in out
        rc, out, err = await mqadmin("haStatus", "-n", ns.addr, "-b", slave.addr)
        assert rc == 0 and "#State: REPLICATING" in out and f"#MasterAddr: {master.addr}" in out
        rc, out, err = await mqadmin("brokerStatus", "-n", ns.addr, "-b", slave.addr)
        assert rc == 0 and "haBehindMasterBytes" in out and "brokerRole" in out


async def test_two_slaves_each_get_the_log(tmp_path: Path) -> None:
    common = {"brokerName": "broker-two", "registerNameServerPeriod": 1000}
    async with (
        run_namesrv(tmp_path) as ns,
        run_broker(ns, tmp_path, brokerRole="SYNC_MASTER", storePathRootDir=tmp_path / "m", **common) as master,
        run_broker(ns, tmp_path, brokerRole="SLAVE", brokerId=1, storePathRootDir=tmp_path / "s1", **common) as s1,
        run_broker(ns, tmp_path, brokerRole="SLAVE", brokerId=2, storePathRootDir=tmp_path / "s2", **common) as s2,
    ):
        assert master.ha is not None and master.ha.master is not None
        await until(lambda: len(master.ha.master.state.links) == 2, what="both slaves connect")
        master.topics.put(TopicConfig.with_queues(TOPIC, 2))
        async with Producer("PG_two", namesrv_addr=ns.addr) as p:
            rs = await asyncio.gather(*(p.send(Message(TOPIC, b"t%d" % i)) for i in range(300)))
        assert {r.send_status for r in rs} == {SendStatus.SEND_OK}
        assert master.store is not None and s1.store is not None and s2.store is not None
        end = master.store.commitlog.max_offset
        for s in (s1, s2):
            await until(lambda s=s: s.store.commitlog.max_offset == end, what="each slave holds the log")
            assert log_bytes(s.store, 0, end) == log_bytes(master.store, 0, end)


async def test_a_slave_ahead_of_a_writable_master_keeps_its_bytes(tmp_path: Path) -> None:
    """haMasterForceWritable: a master restarted on an empty disk takes writes at once; the slave that holds more
    never truncates, keeps serving reads and says so."""
    async with run_namesrv(tmp_path) as ns, run_pair(ns, tmp_path) as (master, slave):
        master.topics.put(TopicConfig.with_queues(TOPIC, 1))
        async with Producer("PG_div", namesrv_addr=ns.addr) as p:
            for i in range(50):
                await p.send(Message(TOPIC, b"d%d" % i))
        assert master.store is not None
        end = master.store.commitlog.max_offset
        await until(lambda: slave.store is not None and slave.store.commitlog.max_offset == end, what="copied")
        assert slave.ha is not None and slave.ha.sync is not None
        await until(slave.ha.sync.sync_all, what="metadata copied")
        # the master's disk is lost; it comes back forced writable while the slave keeps running

        await master.stop()
        shutil.rmtree(master.config.store.root_dir)
        async with run_broker(
            ns,
            tmp_path,
            brokerName="broker-ha",
            registerNameServerPeriod=1000,
            storePathRootDir=tmp_path / "master",
            haMasterForceWritable=True,
        ) as m2:
            assert m2.ha is not None and m2.ha.master is not None
            assert m2.ha.master.state.fenced is None  # writable at once
            assert slave.ha.slave is not None
            await until(lambda: slave.ha.slave.state.state == "AHEAD_OF_MASTER", what="slave reports divergence")
            assert m2.ha.master.state.diverged_slaves
            assert slave.store is not None and slave.store.commitlog.max_offset == end  # nothing truncated
            async with AdminClient(ns.addr) as admin:
                rt = json.loads((await admin.call(slave.addr, RequestCode.GET_BROKER_RUNTIME_INFO)).body)["table"]
                assert rt["haState"] == "AHEAD_OF_MASTER" and int(rt["haAheadOfMasterBytes"]) == end
                h = PullMessageRequestHeader("CG_div", TOPIC, 0, 0, 32, 0x4, 0, 0, 0, "*")
                resp = await admin.call(slave.addr, RequestCode.PULL_MESSAGE, h.to_ext_fields())
                assert len(decode_records(resp.body)) == 32  # still serving reads


async def test_master_waits_for_a_listed_slave_and_not_for_a_gone_one(tmp_path: Path) -> None:
    """A master that starts while the name server lists a slave of its group takes no writes; when that slave
    drops out of the name server (its connection closed), the master stops waiting."""
    from protocol.command import RemotingCommand
    from protocol.headers import RegisterBrokerRequestHeader
    from protocol.remoting import RemotingClient

    async with run_namesrv(tmp_path) as ns:
        ghost = RemotingClient()
        body = json.dumps({"topicConfigSerializeWrapper": {"topicConfigTable": {}}, "filterServerList": []}).encode()
        h = RegisterBrokerRequestHeader("broker-fw", "127.0.0.1:9", "DefaultCluster", "127.0.0.1:10", 1, False, 0)
        resp = await ghost.invoke(
            ns.addr, RemotingCommand.request(RequestCode.REGISTER_BROKER, h.to_ext_fields(), body)
        )
        assert resp.code == ResponseCode.SUCCESS
        async with run_broker(
            ns, tmp_path, brokerName="broker-fw", haSendHeartbeatInterval=200, storePathRootDir=tmp_path / "fw"
        ) as master:
            assert master.ha is not None and master.ha.master is not None
            assert master.ha.master.state.fenced is not None
            async with AdminClient(ns.addr) as admin:
                sh = SendMessageRequestHeader("PG", "TBW102", "TopicFw", 4, 0, 0, 0, 0, "", 0, False)
                refused = await admin.call(
                    master.addr,
                    RequestCode.SEND_MESSAGE,
                    sh.to_ext_fields(),
                    b"x",
                    ok=(ResponseCode.SERVICE_NOT_AVAILABLE,),
                )
                assert refused.code == ResponseCode.SERVICE_NOT_AVAILABLE
                await ghost.close()  # the listed slave is gone
                await until(lambda: master.ha.master.state.fenced is None, what="master stops waiting")
                ok = await admin.call(master.addr, RequestCode.SEND_MESSAGE, sh.to_ext_fields(), b"x")
                assert ok.code == ResponseCode.SUCCESS


async def test_pull_suggestions_as_j(tmp_path: Path) -> None:
    """suggestWhichBrokerId: 0 by default; with slaveReadEnable, whichBrokerWhenConsumeSlowly (1) once the consumer
    reads beyond accessMessageInMemoryMaxRatio of memory (0 % here: always); on a slave an offset it cannot serve
    is PULL_RETRY_IMMEDIATELY with the offset kept (offsetCheckInSlave=false)."""
    async with (
        run_namesrv(tmp_path) as ns,
        run_pair(ns, tmp_path, slaveReadEnable=True, accessMessageInMemoryMaxRatio=0) as (
            master,
            slave,
        ),
    ):
        master.topics.put(TopicConfig.with_queues(TOPIC, 1))
        async with Producer("PG_sug", namesrv_addr=ns.addr) as p:
            for i in range(5):
                await p.send(Message(TOPIC, b"s%d" % i))
        assert slave.ha is not None and slave.ha.sync is not None
        await until(slave.ha.sync.sync_all, what="metadata copied")
        assert master.store is not None and slave.store is not None
        await until(lambda: slave.store.commitlog.max_offset == master.store.commitlog.max_offset, what="copied")
        async with AdminClient(ns.addr) as admin:

            async def pull(addr: str, offset: int) -> tuple[int, dict[str, str]]:
                h = PullMessageRequestHeader("CG_sug", TOPIC, 0, offset, 32, 0x4, 0, 0, 0, "*")
                resp = await admin.call(
                    addr,
                    RequestCode.PULL_MESSAGE,
                    h.to_ext_fields(),
                    ok=(ResponseCode.SUCCESS, ResponseCode.PULL_RETRY_IMMEDIATELY, ResponseCode.PULL_OFFSET_MOVED),
                )
                return resp.code, resp.ext_fields

            code, ext = await pull(master.addr, 0)
            assert code == ResponseCode.SUCCESS and ext["suggestWhichBrokerId"] == "1"
            code, ext = await pull(slave.addr, 0)
            assert code == ResponseCode.SUCCESS and ext["suggestWhichBrokerId"] == "1"
            code, ext = await pull(slave.addr, 1000)  # beyond the slave's queue
            assert code == ResponseCode.PULL_RETRY_IMMEDIATELY
            assert ext["nextBeginOffset"] == "1000" and ext["suggestWhichBrokerId"] == "0"
            code, ext = await pull(master.addr, 1000)
            assert code == ResponseCode.PULL_OFFSET_MOVED and ext["nextBeginOffset"] == "0"  # J: minOffset 0
        # our client follows the suggestion: after a pull from the master, the next one goes to slave 1
        from client import PullConsumer

        async with PullConsumer("CG_sug_client", namesrv_addr=ns.addr) as c:
            [mq] = await c.fetch_subscribe_queues(TOPIC)
            assert await c.instance.find_pull_addr(mq) == (master.addr, False)
            res = await c.pull(mq, 0, 2)
            assert len(res.msg_found_list) == 2
            assert await c.instance.find_pull_addr(mq) == (slave.addr, True)
            res = await c.pull(mq, res.next_begin_offset, 32)  # served by the slave
            assert [m.body for m in res.msg_found_list] == [b"s2", b"s3", b"s4"]


async def test_default_pull_suggests_the_master(tmp_path: Path) -> None:
    async with run_namesrv(tmp_path) as ns, run_pair(ns, tmp_path) as (master, slave):
        master.topics.put(TopicConfig.with_queues(TOPIC, 1))
        async with Producer("PG_sug0", namesrv_addr=ns.addr) as p:
            await p.send(Message(TOPIC, b"x"))
        assert slave.ha is not None and slave.ha.sync is not None and slave.store is not None
        assert master.store is not None
        await until(slave.ha.sync.sync_all, what="metadata copied")
        await until(lambda: slave.store.commitlog.max_offset == master.store.commitlog.max_offset, what="copied")
        async with AdminClient(ns.addr) as admin:
            h = PullMessageRequestHeader("CG_sug0", TOPIC, 0, 0, 32, 0x4 | 0x1, 5, 0, 0, "*")
            resp = await admin.call(slave.addr, RequestCode.PULL_MESSAGE, h.to_ext_fields())
            # a slave without slaveReadEnable still returns what it has and sends the consumer back to the master
            assert len(decode_records(resp.body)) == 1 and resp.ext_fields["suggestWhichBrokerId"] == "0"
            assert slave.offsets.query("CG_sug0", TOPIC, 0) == -1  # the commit bit is ignored on a slave


async def test_empty_master_takes_back_the_longest_of_two_slaves(tmp_path: Path) -> None:
    """Two slaves, one behind the other; the master loses its disk. Whichever slave connects first, the master
    copies back up to the longest slave's end before it takes a write."""
    common = {"brokerName": "broker-2s", "registerNameServerPeriod": 500}
    async with (
        run_namesrv(tmp_path) as ns,
        run_broker(ns, tmp_path, brokerRole="SLAVE", brokerId=1, storePathRootDir=tmp_path / "s1", **common) as s1,
        run_broker(ns, tmp_path, brokerRole="SLAVE", brokerId=2, storePathRootDir=tmp_path / "s2", **common) as s2,
    ):
        assert s1.ha is not None and s1.ha.slave is not None and s1.store is not None and s2.store is not None
        async with run_broker(ns, tmp_path, storePathRootDir=tmp_path / "m", **common) as master:
            assert master.ha is not None and master.ha.master is not None and master.store is not None
            await until(lambda: len(master.ha.master.state.links) == 2, what="both slaves connect")
            master.topics.put(TopicConfig.with_queues(TOPIC, 2))
            async with Producer("PG_2s", namesrv_addr=ns.addr) as p:
                for i in range(100):
                    await p.send(Message(TOPIC, b"first%d" % i))
                await until(lambda: s1.store.commitlog.max_offset == master.store.commitlog.max_offset, what="s1")
                await s1.ha.slave.stop()  # s1 falls behind
                for i in range(100):
                    await p.send(Message(TOPIC, b"second%d" % i))
            longest = master.store.commitlog.max_offset
            await until(lambda: s2.store.commitlog.max_offset == longest, what="s2 holds everything")
            assert s1.store.commitlog.max_offset < longest
        shutil.rmtree(tmp_path / "m")
        s1.ha.slave.start()
        async with run_broker(ns, tmp_path, storePathRootDir=tmp_path / "m", **common) as master:
            assert master.ha is not None and master.ha.master is not None and master.store is not None
            await until(lambda: master.ha.master.state.fenced is None, timeout=30, what="master takes writes")
            assert master.store.commitlog.max_offset == longest
            assert log_bytes(master.store, 0, longest) == log_bytes(s2.store, 0, longest)
            await until(lambda: s1.store.commitlog.max_offset == longest, what="s1 catches up from the master")


def test_mqbroker_refuses_a_slave_with_broker_id_0(tmp_path: Path) -> None:
    import subprocess
    import sys

    conf = tmp_path / "slave.conf"
    conf.write_text(f"brokerRole=SLAVE\nbrokerId=0\nstorePathRootDir={tmp_path}/store\n")
    r = subprocess.run(
        [sys.executable, "-m", "broker", "-c", str(conf)],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=Path(__file__).resolve().parents[2],
    )
    assert r.returncode != 0 and "Traceback" not in r.stderr
    [line] = r.stderr.strip().splitlines()
    assert "SLAVE" in line and "brokerId" in line


async def test_sync_master_without_slave_delivers_a_delayed_message_once(tmp_path: Path) -> None:
    async with (
        run_namesrv(tmp_path) as ns,
        run_broker(ns, tmp_path, brokerRole="SYNC_MASTER", brokerName="b-delay", messageDelayLevel="1s 2s") as b,
    ):
        b.topics.put(TopicConfig.with_queues("TopicDelay", 1))
        async with Producer("PG_delay", namesrv_addr=ns.addr) as p:
            r = await p.send(Message("TopicDelay", b"later", delay_level=1))
        assert r.send_status is SendStatus.SLAVE_NOT_AVAILABLE  # stored, no slave to confirm it
        assert b.store is not None and b.schedule is not None
        await until(lambda: b.store.get_max_offset_in_queue("TopicDelay", 0) >= 1, what="delivered")
        await until(lambda: b.schedule.delivered >= 1, what="schedule counted it")
        assert b.store.get_max_offset_in_queue("TopicDelay", 0) == 1  # once, not re-put in a loop


async def test_slave_restarted_mid_stream_resumes_from_its_end(tmp_path: Path) -> None:
    common = {"brokerName": "broker-rs", "registerNameServerPeriod": 500, "haTransferBatchSize": 1024}
    async with (
        run_namesrv(tmp_path) as ns,
        run_broker(ns, tmp_path, storePathRootDir=tmp_path / "m", **common) as master,
    ):
        master.topics.put(TopicConfig.with_queues(TOPIC, 2))
        assert master.store is not None
        async with Producer("PG_rs", namesrv_addr=ns.addr) as p:

            async def send(n: int, tag: str) -> None:
                await asyncio.gather(*(p.send(Message(TOPIC, f"{tag}{i}".encode() * 20)) for i in range(n)))

            await send(500, "a")
            slave_args = {"brokerRole": "SLAVE", "brokerId": 1, "storePathRootDir": tmp_path / "s", **common}
            async with run_broker(ns, tmp_path, **slave_args) as slave:
                assert slave.store is not None
                await until(lambda: slave.store.commitlog.max_offset > 0, what="slave starts copying")
                sending = asyncio.ensure_future(send(500, "b"))
            await sending  # the slave stopped in the middle of the stream (1 KiB frames split records)
            await send(500, "c")
            async with run_broker(ns, tmp_path, **slave_args) as slave:
                assert slave.store is not None
                end = master.store.commitlog.max_offset
                await until(lambda: slave.store.commitlog.max_offset == end, what="slave resumes and catches up")
                assert log_bytes(slave.store, 0, end) == log_bytes(master.store, 0, end)
                for qid in range(2):
                    assert queue_units(slave.store, TOPIC, qid) == queue_units(master.store, TOPIC, qid)


async def test_producers_skip_a_group_whose_master_is_down(tmp_path: Path) -> None:
    async with (
        run_namesrv(tmp_path) as ns,
        run_pair(ns, tmp_path) as (master, slave),
        run_broker(ns, tmp_path, brokerName="broker-other", storePathRootDir=tmp_path / "other") as other,
    ):
        for b in (master, other):
            b.topics.put(TopicConfig.with_queues("TopicTwoGroups", 2))
        async with Producer("PG_skip", namesrv_addr=ns.addr, poll_namesrv_interval=0.2) as p:
            first = await asyncio.gather(*(p.send(Message("TopicTwoGroups", b"%d" % i)) for i in range(40)))
            assert {r.message_queue.broker_name for r in first} == {"broker-ha", "broker-other"}
            await master.stop(grace=0.5)  # broker-ha keeps only its slave in the routes

            async def only_other() -> bool:
                route = await p.instance.get_route("TopicTwoGroups", refresh=True)
                return route is not None and {q.broker_name for q in route.publish_queues()} == {"broker-other"}

            await until(only_other, what="routes without broker-ha's master")
            after = await asyncio.gather(*(p.send(Message("TopicTwoGroups", b"x%d" % i)) for i in range(40)))
            assert {r.message_queue.broker_name for r in after} == {"broker-other"}
            assert {r.send_status for r in after} == {SendStatus.SEND_OK}
        assert slave.addr  # the slave stays listed for consumers


async def test_operator_forces_a_fenced_master_writable_at_run_time(tmp_path: Path) -> None:
    from protocol.command import RemotingCommand
    from protocol.headers import RegisterBrokerRequestHeader
    from protocol.remoting import RemotingClient

    async with run_namesrv(tmp_path) as ns:
        ghost = RemotingClient()  # a listed slave that never connects (its host is gone, say)
        try:
            body = json.dumps({"topicConfigSerializeWrapper": {"topicConfigTable": {}}}).encode()
            h = RegisterBrokerRequestHeader("broker-fo2", "127.0.0.1:9", "DefaultCluster", "127.0.0.1:10", 1, False, 0)
            await ghost.invoke(ns.addr, RemotingCommand.request(RequestCode.REGISTER_BROKER, h.to_ext_fields(), body))
            async with run_broker(ns, tmp_path, brokerName="broker-fo2", storePathRootDir=tmp_path / "fo2") as master:
                assert master.ha is not None and master.ha.master is not None
                assert master.ha.master.state.fenced is not None
                async with AdminClient(ns.addr) as admin:
                    await admin.update_broker_config(master.addr, "haMasterForceWritable", "true")
                    assert master.ha.master.state.fenced is None
                    sh = SendMessageRequestHeader("PG", "TBW102", "TopicForced", 4, 0, 0, 0, 0, "", 0, False)
                    ok = await admin.call(master.addr, RequestCode.SEND_MESSAGE, sh.to_ext_fields(), b"x")
                    assert ok.code == ResponseCode.SUCCESS
                    assert master.config.ha.ha_master_force_writable
        finally:
            await ghost.close()


async def test_ha_port_in_use_is_a_one_line_start_error(tmp_path: Path) -> None:
    import socket

    from broker.app import BrokerStartError

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        with pytest.raises(BrokerStartError, match=f"HA port {port}: address already in use"):
            async with run_broker(None, tmp_path, haListenPort=port):
                pass


async def test_replication_lag_in_metrics(tmp_path: Path) -> None:
    """The master exports each slave's acked offset and lag; the slave how far it is behind; both from the HA state."""
    from protocol.remoting import RemotingClient
    from tests.integration.broker_wire import send
    from tests.integration.test_metrics import METRICS, scrape, value

    client = RemotingClient()
    try:
        async with run_namesrv(tmp_path) as ns, run_pair(ns, tmp_path, **METRICS) as (master, slave):
            assert master.ha is not None and master.ha.master is not None and slave.ha is not None
            assert master.metrics is not None and slave.metrics is not None
            await until(lambda: master.ha.master.state.links, what="slave connects")
            for i in range(20):
                r = await send(client, master.addr, "LagTopic", b"lag-%d" % i, queue_id=0)
                assert r.code == ResponseCode.SUCCESS, r.remark
            end = master.store.commitlog.max_offset  # type: ignore[union-attr]
            links = master.ha.master.state.links
            await until(lambda: all(link.ack_offset == end for link in links.values()), what="the slave acks the end")
            s = await scrape(master.metrics.port)
            (peer,) = [link.peer for link in links.values()]
            base = {"node_type": "broker", "slave": peer}
            assert value(s, "rocketq_ha_slave_ack_offset_bytes", **base) == end
            assert value(s, "rocketq_ha_slave_lag_bytes", **base) == 0
            assert value(s, "rocketq_ha_connected_slaves", node_type="broker") == 1
            assert value(s, "rocketq_ha_writes_fenced", node_type="broker") == 0
            s = await scrape(slave.metrics.port)
            assert value(s, "rocketq_ha_replica_behind_bytes", node_type="broker") == 0
            assert "rocketq_ha_slave_lag_bytes" not in s  # a slave has no slaves of its own
    finally:
        await client.close()
