"""Three controllers (``mqcontroller`` processes, J's jRaft keys) agreeing through PySyncObj's Raft log: one leader
serves, followers answer CONTROLLER_NOT_LEADER and name the leader; after ``kill -9`` of the leader a new leader
serves the same state and takes new writes; a restarted controller rejoins from its own journal."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from controller.config import load_config, raft_peers
from protocol.bodies.controller import SyncStateSet
from protocol.codes import RequestCode, ResponseCode, SerializeType
from protocol.command import RemotingCommand
from protocol.headers.controller import GetMetaDataResponseHeader, GetReplicaInfoResponseHeader
from protocol.remoting import RemotingClient
from tests.eventually import eventually
from tests.integration.controller_peers import ReplicaPeer, mqadmin
from tests.servers import Proc, free_port

pytestmark = pytest.mark.timeout(240)


def _conf(tmp_path: Path, rafts: list[str], rpcs: list[str], i: int) -> Path:
    conf = tmp_path / f"c{i}.conf"
    conf.write_text(
        "controllerType=jRaft\njRaftGroupId=ctl-test\n"
        f"jRaftInitConf={','.join(rafts)}\njRaftServerId={rafts[i]}\njRaftControllerRPCAddr={','.join(rpcs)}\n"
        f"jRaftElectionTimeoutMs=1000\ncontrollerStorePath={tmp_path}/store{i}\nlistenAddress=127.0.0.1\n"
        "scanNotActiveBrokerInterval=500\nscanInactiveMasterInterval=500\nlogFileMaxSize=0\n"
    )
    return conf


def _kill9(proc: Proc) -> None:
    proc.p.kill()
    proc.stop(timeout=5)  # reaps it and closes its log


def _start(conf: Path, log: Path) -> Proc:
    proc = Proc([sys.executable, "-m", "controller", "-c", str(conf)], log)
    proc.wait_line(lambda ln: "boot success" in ln, 30)
    return proc


async def _metadata(client: RemotingClient, addr: str) -> GetMetaDataResponseHeader | None:
    try:
        cmd = RemotingCommand.request(RequestCode.CONTROLLER_GET_METADATA_INFO, {}, serialize_type=SerializeType.JSON)
        resp = await client.invoke(addr, cmd, 2.0)
    except Exception:
        return None
    return GetMetaDataResponseHeader.from_ext_fields(resp.ext_fields)


async def _agreed_leader(client: RemotingClient, addrs: list[str]) -> str | None:
    """The leader every listed controller names, once they all agree and it says it leads."""
    metas = [await _metadata(client, a) for a in addrs]
    leaders = {m.controller_leader_address for m in metas if m is not None}
    if len(leaders) != 1 or None in leaders or any(m is None for m in metas):
        return None
    leader = leaders.pop()
    lead = await _metadata(client, leader or "")
    return leader if lead is not None and lead.is_leader else None


def test_peers_from_dledger_keys_take_the_raft_port_offset() -> None:
    cfg = load_config(
        None,
        {
            "controllerDLegerGroup": "g1",
            "controllerDLegerPeers": "n0-127.0.0.1:9877;n1-127.0.0.1:9878;n2-127.0.0.1:9879",
            "controllerDLegerSelfId": "n1",
        },
    )
    peers = raft_peers(cfg)
    assert peers is not None and peers.group == "g1"
    assert (peers.self_peer.peer_id, peers.self_peer.rpc_addr, peers.self_peer.raft_addr) == (
        "n1",
        "127.0.0.1:9878",
        "127.0.0.1:10878",
    )
    assert [p.peer_id for p in peers.others] == ["n0", "n2"]
    with pytest.raises(Exception, match="controllerDLegerSelfId 'n9' is not one of controllerDLegerPeers"):
        load_config(None, {"controllerDLegerPeers": "n0-127.0.0.1:9877", "controllerDLegerSelfId": "n9"})


async def test_leader_killed_new_leader_serves_the_same_state(tmp_path: Path) -> None:
    rafts = [f"127.0.0.1:{free_port()}" for _ in range(3)]
    rpcs = [f"127.0.0.1:{free_port()}" for _ in range(3)]
    confs = [_conf(tmp_path, rafts, rpcs, i) for i in range(3)]
    procs = [_start(confs[i], tmp_path / f"c{i}.log") for i in range(3)]
    client = RemotingClient()
    try:
        leader = await eventually(lambda: _agreed_leader(client, rpcs), timeout=30, what="one agreed leader")
        follower = next(a for a in rpcs if a != leader)
        async with ReplicaPeer("broker-r", follower) as b1, ReplicaPeer("broker-r", leader) as b2:
            refused = await b1.call(RequestCode.CONTROLLER_GET_NEXT_BROKER_ID, {"clusterName": "c", "brokerName": "x"})
            assert refused.code == ResponseCode.CONTROLLER_NOT_LEADER
            b1.controller = leader
            await b1.register()
            await b2.register()
            for addr in rpcs:  # J's brokers heartbeat every controller they can reach
                b1.controller = b2.controller = addr
                await b1.heartbeat()
                await b2.heartbeat()
            b1.controller = b2.controller = leader
            assert (await b1.elect()).code == ResponseCode.SUCCESS
            assert (await b1.alter([1, 2], master_epoch=1, sss_epoch=1)).code == ResponseCode.SUCCESS
            rc, out, err = await mqadmin("getControllerMetaData", "-a", follower)
            assert rc == 0 and f"#ControllerLeaderAddress\t{leader}" in out and "#ControllerGroup\tctl-test" in out, err
            assert out.count("#Peer:\t") == 3

            idx = rpcs.index(leader)
            _kill9(procs[idx])
            survivors = [a for a in rpcs if a != leader]
            new_leader = await eventually(
                lambda: _agreed_leader(client, survivors), timeout=30, what="a new leader among the survivors"
            )
            assert new_leader != leader
            b1.controller = b2.controller = new_leader
            resp = await b1.replica_info()
            head = GetReplicaInfoResponseHeader.from_ext_fields(resp.ext_fields)
            assert (resp.code, head.master_broker_id, head.master_epoch) == (ResponseCode.SUCCESS, 1, 1)
            assert SyncStateSet.decode(resp.body) == SyncStateSet(sync_state_set=[1, 2], sync_state_set_epoch=2)
            # the new leader takes writes: the master shrinks its set
            assert (await b1.alter([1], master_epoch=1, sss_epoch=2)).code == ResponseCode.SUCCESS

            # the killed controller comes back from its own journal and catches up; then the current leader dies
            # too: the two left must still hold SyncStateSet epoch 3
            procs[idx] = _start(confs[idx], tmp_path / f"c{idx}-again.log")
            await eventually(lambda: _agreed_leader(client, rpcs), timeout=30, what="three agree again")
            current = await eventually(lambda: _agreed_leader(client, rpcs), timeout=5, what="the leader")
            _kill9(procs[rpcs.index(current)])
            rest = [a for a in rpcs if a != current]
            last = await eventually(lambda: _agreed_leader(client, rest), timeout=30, what="a third leader")
            b1.controller = last
            resp = await b1.replica_info()
            assert resp.code == ResponseCode.SUCCESS, resp.remark
            assert SyncStateSet.decode(resp.body) == SyncStateSet(sync_state_set=[1], sync_state_set_epoch=3)
    finally:
        await client.close()
        for p in procs:
            p.stop(timeout=5)
