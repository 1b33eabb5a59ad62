"""Apache RocketMQ 5.5.0's own brokers in controller mode (``enableControllerMode=true``) against rocketq's
controller (``mqcontroller``), with Apache's name server, and Apache's mqadmin 5.5.0 reading and driving our
controller: three replicas of one group register (J's broker-id negotiation), the first is elected, the master grows
the SyncStateSet to all three; ``kill -9`` of the master elects another member of the SyncStateSet and the name
server routes to it; mqadmin ``electMaster`` moves the master to a named in-sync replica. A second test starts
Apache's own controller (``ControllerStartup``) and compares what mqadmin prints of both controllers' metadata."""

from __future__ import annotations

import asyncio
import re
import sys
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from client.admin import controller_admin as ca
from client.admin.admin_client import AdminClient
from protocol.bodies.controller import ReplicasInfo
from tests.eventually import eventually
from tests.reference.peers import _boot_java, missing, mqadmin, port_block
from tests.servers import Proc, free_port

pytestmark = [pytest.mark.reference, pytest.mark.timeout(900)]

GROUP = "broker-a"


@dataclass
class Site:
    work: Path
    ns_addr: str = ""
    controllers: list[str] = field(default_factory=list)  # live controllers' remoting addresses
    procs: dict[str, Proc] = field(default_factory=dict)

    @property
    def controller_addr(self) -> str:
        """What mqadmin's ``-a`` gets: J's commands ask the first address of the list."""
        return self.controllers[0]

    def stop(self) -> None:
        for p in reversed(list(self.procs.values())):
            p.stop(timeout=5)


def _broker_conf(site: Site, i: int) -> tuple[Path, str]:
    port = port_block((-2, 0, 1))
    d = site.work / f"b{i}"
    d.mkdir(parents=True, exist_ok=True)
    (d / "broker.conf").write_text(
        f"brokerClusterName=RefCluster\nbrokerName={GROUP}\nbrokerIP1=127.0.0.1\nlistenPort={port}\n"
        f"haListenPort={port + 1}\nnamesrvAddr={site.ns_addr}\nstorePathRootDir={d}/store\n"
        f"storePathCommitLog={d}/store/commitlog\nmappedFileSizeCommitLog=67108864\n"
        f"enableControllerMode=true\ncontrollerAddr={';'.join(site.controllers)}\n"
    )
    return d, f"127.0.0.1:{port}"


def _boot_broker(site: Site, i: int) -> Proc:
    d, _addr = _broker_conf(site, i)
    return _boot_java(
        "org.apache.rocketmq.broker.BrokerStartup", ["-c", str(d / "broker.conf")], d, f"b{i}", "boot success"
    )


def _controller_confs(work: Path, n: int) -> list[tuple[Path, str]]:
    """``n`` controller configs (one: single mode; three: J's jRaft keys, PySyncObj) and their addresses."""
    rpcs = [f"127.0.0.1:{free_port()}" for _ in range(n)]
    rafts = [f"127.0.0.1:{free_port()}" for _ in range(n)]
    out = []
    for i in range(n):
        conf = work / f"controller{i}.conf"
        peers = (
            f"controllerType=jRaft\njRaftInitConf={','.join(rafts)}\njRaftServerId={rafts[i]}\n"
            f"jRaftControllerRPCAddr={','.join(rpcs)}\n"
            if n > 1
            else f"listenPort={rpcs[0].rpartition(':')[2]}\n"
        )
        conf.write_text(
            f"{peers}listenAddress=127.0.0.1\ncontrollerStorePath={work}/ctl{i}\n"
            "scanNotActiveBrokerInterval=1000\nscanInactiveMasterInterval=1000\nlogFileMaxSize=0\n"
        )
        out.append((conf, rpcs[i]))
    return out


@pytest.fixture(params=[1, 3], ids=["one-controller", "three-controllers"])
def site(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[Site]:
    if reason := missing("apache"):
        pytest.skip(reason)
    s = Site(tmp_path)
    try:
        for i, (conf, addr) in enumerate(_controller_confs(tmp_path, request.param)):
            proc = Proc([sys.executable, "-m", "controller", "-c", str(conf)], tmp_path / f"controller{i}.log")
            s.procs[f"c{i}"] = proc
            proc.wait_line(lambda ln: "boot success" in ln, 30)
            s.controllers.append(addr)
        ns_port = free_port()
        (tmp_path / "namesrv.conf").write_text(f"listenPort={ns_port}\n")
        s.ns_addr = f"127.0.0.1:{ns_port}"
        s.procs["namesrv"] = _boot_java(
            "org.apache.rocketmq.namesrv.NamesrvStartup",
            ["-c", str(tmp_path / "namesrv.conf")],
            tmp_path,
            "ns",
            "boot success",
        )
        with ThreadPoolExecutor(3) as pool:
            for i, proc in enumerate(pool.map(lambda i: _boot_broker(s, i), range(3))):
                s.procs[f"b{i}"] = proc
        yield s
    finally:
        s.stop()


async def _group(site: Site) -> ReplicasInfo | None:
    async with AdminClient(site.ns_addr) as admin:
        try:
            info = await ca.sync_state_data(admin, site.controller_addr, [GROUP])
        except Exception:
            return None
    return info.replicas_info_table.get(GROUP)


async def _routed_master(site: Site) -> str | None:
    async with AdminClient(site.ns_addr) as admin:
        info = await admin.cluster_info()
    return ((info.get("brokerAddrTable") or {}).get(GROUP, {}).get("brokerAddrs") or {}).get("0")


def _field(out: str, name: str) -> str:
    m = re.search(rf"^#{name}\t(.*)$", out, re.M)
    assert m, f"no #{name} in {out!r}"
    return m.group(1)


def _mqadmin(site: Site, *args: str) -> str:
    r = mqadmin(site.ns_addr, site.work / "adm", *args)
    assert r.returncode == 0, r.stdout + r.stderr[-3000:]
    return r.stdout


def _mqadmin_until(site: Site, ok: Callable[[str], bool], *args: str) -> str:
    """mqadmin's output once ``ok`` holds for it (asked again every second, 60 s at most)."""

    async def answer() -> str | None:
        out = await asyncio.to_thread(_mqadmin, site, *args)
        return out if ok(out) else None

    out: str = asyncio.run(eventually(answer, timeout=60, step=1.0, what=f"mqadmin {args[0]}"))
    return out


def _proc_of(site: Site, addr: str) -> Proc:
    port = addr.rpartition(":")[2]
    for name, proc in site.procs.items():
        if name.startswith("b") and f"listenPort={port}\n" in (site.work / name / "broker.conf").read_text():
            return proc
    raise AssertionError(f"no broker process listens on {addr}")


async def _leader(site: Site) -> str | None:
    """The controller every live one names as leader, once they agree."""
    async with AdminClient(site.ns_addr) as admin:
        named = set()
        for addr in site.controllers:
            try:
                named.add((await ca.controller_metadata(admin, addr)).controller_leader_address)
            except Exception:
                return None
    leader = named.pop() if len(named) == 1 else None
    return leader if leader in site.controllers else None


def _kill_controller_leader(site: Site) -> None:
    """kill -9 the Raft leader; the survivors elect another that serves the same broker groups."""
    leader = asyncio.run(eventually(lambda: _leader(site), timeout=30, what="the controllers' leader"))
    site.procs[f"c{site.controllers.index(leader)}"].p.kill()
    site.controllers.remove(leader)
    new = asyncio.run(eventually(lambda: _leader(site), timeout=30, what="a new controller leader"))
    assert new != leader


def test_apache_brokers_fail_over_through_our_controller(site: Site) -> None:
    async def in_sync(n: int) -> ReplicasInfo | None:
        g = await _group(site)
        return g if g is not None and g.master_broker_id is not None and len(g.in_sync_replicas) == n else None

    g = asyncio.run(eventually(lambda: in_sync(3), timeout=120, what="a master and 3 replicas in sync", step=0.5))
    # elected once (MasterEpoch 1); the set grown at least twice (a slave that lags under load leaves and rejoins)
    assert g.master_epoch == 1 and g.sync_state_set_epoch >= 3
    master = g.master_address
    assert asyncio.run(eventually(lambda: _routed_master(site), timeout=60, what="the master routed")) == master

    out = _mqadmin(site, "getSyncStateSet", "-a", site.controller_addr, "-b", GROUP)
    assert _field(out, "MasterAddr") == master and _field(out, "SyncStateSetNums") == "3"
    assert _field(out, "MasterEpoch") == "1" and out.count("InSyncReplica:\tReplicaIdentity{") == 3
    out = _mqadmin(site, "getControllerMetaData", "-a", site.controller_addr)
    # the leader the controllers agree on (a loaded machine may have moved it off the first controller)
    leader = asyncio.run(eventually(lambda: _leader(site), timeout=30, what="a controller leader"))
    assert _field(out, "ControllerLeaderAddress") in site.controllers and leader in site.controllers
    # served by Apache's brokers from their epoch files, once each has registered its address with the name server
    out = _mqadmin_until(
        site, lambda o: o.count("#Epoch: EpochEntry{epoch=1, startOffset=0") == 3, "getBrokerEpoch", "-b", GROUP
    )
    if len(site.controllers) > 1:  # the controllers lose their leader first: the group's state survives it
        _kill_controller_leader(site)
        same = asyncio.run(eventually(lambda: in_sync(3), timeout=30, what="the group on the new leader"))
        assert (same.master_address, same.master_epoch) == (master, 1)
        assert same.sync_state_set_epoch >= g.sync_state_set_epoch

    # kill -9 the master: the controller elects another member of the SyncStateSet
    _proc_of(site, master or "").p.kill()

    async def new_master() -> ReplicasInfo | None:
        g2 = await _group(site)
        return g2 if g2 is not None and g2.master_address not in (None, master) else None

    g2 = asyncio.run(eventually(new_master, timeout=90, what="a new master after kill -9", step=0.5))
    assert g2.master_epoch == 2 and g2.master_broker_id in {r.broker_id for r in g.in_sync_replicas}
    assert (
        asyncio.run(eventually(lambda: _routed_master(site), timeout=60, what="the new master routed"))
        == g2.master_address
    )

    # the surviving slave rejoins the set; mqadmin electMaster moves the master to it
    g3 = asyncio.run(eventually(lambda: in_sync(2), timeout=90, what="the survivor back in the set", step=0.5))
    target = next(r for r in g3.in_sync_replicas if r.broker_id != g3.master_broker_id)
    out = _mqadmin(
        site, "electMaster", "-a", site.controller_addr, "-c", "RefCluster", "-bn", GROUP, "-b", str(target.broker_id)
    )
    assert _field(out, "BrokerMasterAddr") == target.broker_address and _field(out, "MasterEpoch") == "3"
    assert (
        asyncio.run(eventually(lambda: _routed_master(site), timeout=60, what="the designated master routed"))
        == target.broker_address
    )
    out = _mqadmin(site, "getSyncStateSet", "-a", site.controller_addr, "-b", GROUP)
    assert _field(out, "MasterBrokerId") == str(target.broker_id) and _field(out, "MasterEpoch") == "3"


def test_mqadmin_reads_our_controller_as_it_reads_apaches(tmp_path: Path) -> None:
    """getControllerMetaData and getControllerConfig of Apache's ControllerStartup (one DLedger peer) and of ours:
    the same lines, addresses masked; our config lists J's keys that apply here (a subset of J's)."""
    if reason := missing("apache"):
        pytest.skip(reason)
    port, ours_port = free_port(), free_port()
    (tmp_path / "j.conf").write_text(
        f"controllerDLegerGroup=g1\ncontrollerDLegerPeers=n0-127.0.0.1:{port}\ncontrollerDLegerSelfId=n0\n"
        f"controllerStorePath={tmp_path}/jstore\n"
    )
    (tmp_path / "o.conf").write_text(
        f"controllerDLegerGroup=g1\ncontrollerDLegerPeers=n0-127.0.0.1:{ours_port}\ncontrollerDLegerSelfId=n0\n"
        f"controllerStorePath={tmp_path}/ostore\nlistenAddress=127.0.0.1\nlogFileMaxSize=0\n"
    )
    j = _boot_java(
        "org.apache.rocketmq.controller.ControllerStartup",
        ["-c", str(tmp_path / "j.conf")],
        tmp_path,
        "jctl",
        "boot success",
    )
    ours = Proc([sys.executable, "-m", "controller", "-c", str(tmp_path / "o.conf")], tmp_path / "octl.log")
    try:
        ours.wait_line(lambda ln: "boot success" in ln, 30)
        outs = {}
        for name, addr in (("apache", f"127.0.0.1:{port}"), ("rocketq", f"127.0.0.1:{ours_port}")):
            r = asyncio.run(
                eventually(
                    lambda addr=addr: _leader_known(tmp_path, addr), timeout=60, what=f"{name} controller leader"
                )
            )
            outs[name] = re.sub(r"127\.0\.0\.1:\d+", "ADDR", r)
        assert outs["rocketq"] == outs["apache"], outs
        keys = {}
        for name, addr in (("apache", f"127.0.0.1:{port}"), ("rocketq", f"127.0.0.1:{ours_port}")):
            r = mqadmin("127.0.0.1:1", tmp_path / "adm", "getControllerConfig", "-a", addr)
            assert r.returncode == 0, r.stderr[-2000:]
            keys[name] = {ln.split("=", 1)[0].strip() for ln in r.stdout.splitlines() if "=  " in ln}
        shared = {"controllerDLegerGroup", "controllerDLegerPeers", "controllerDLegerSelfId", "enableElectUncleanMaster",
                  "notifyBrokerRoleChanged", "scanNotActiveBrokerInterval", "scanInactiveMasterInterval",
                  "electMasterMaxRetryCount", "controllerStorePath", "configBlackList", "controllerType"}  # fmt: skip
        assert shared <= keys["apache"] and shared <= keys["rocketq"]
    finally:
        ours.stop(timeout=5)
        j.stop(timeout=5)


async def _leader_known(work: Path, addr: str) -> str | None:
    r = await asyncio.to_thread(mqadmin, "127.0.0.1:1", work / "adm", "getControllerMetaData", "-a", addr)
    return r.stdout if r.returncode == 0 and "#ControllerLeaderAddress\t127" in r.stdout else None
