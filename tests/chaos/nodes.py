"""The chaos suite's nodes: three controllers (Raft), a name server and one broker group of three replicas of our
broker in controller mode, each a real process (``python -m controller|namesrv|broker``) inside its own network
namespace (``netns.py``), with J's default timings. ``Cluster`` starts them, kills (-9), restarts, pauses
(SIGSTOP) and resumes them, and asks who is master (GET_BROKER_HA_STATUS) and who leads the controllers.

==========  ==============  ========================================================================
node        address         process
==========  ==============  ========================================================================
ns          <subnet>.10     name server, port 9876
c0..c2      <subnet>.11-13  controllers (DLedger keys; remoting 9878, Raft 10878)
b0..b2      <subnet>.21-23  brokers of group ``broker-chaos``: listenPort 10911, haListenPort 10912,
                            ``enableControllerMode``, ``allAckInSyncStateSet=true``, ``minInSyncReplicas=2``
==========  ==============  ========================================================================

(``<subnet>`` is 10.77.0 by default, 10.78.<k> with ``ROCKETQ_CHAOS_NET=<k>``: ``netns.py``.)
"""

from __future__ import annotations

import contextlib
import json
import signal
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from client.admin.admin_client import AdminClient
from protocol.codes import RequestCode, SerializeType
from protocol.command import RemotingCommand
from protocol.headers.controller import GetMetaDataResponseHeader
from protocol.remoting import RemotingClient
from tests.chaos.netns import Network
from tests.eventually import eventually

REPO = Path(__file__).resolve().parents[2]
CLUSTER = "ChaosCluster"
GROUP = "broker-chaos"
CONTROLLERS = ["c0", "c1", "c2"]
BROKERS = ["b0", "b1", "b2"]
INDEX = {"ns": 10, "c0": 11, "c1": 12, "c2": 13, "b0": 21, "b1": 22, "b2": 23}
BROKER_PORT = 10911
CONTROLLER_PORT = 9878


@dataclass
class NodeProc:
    name: str
    argv: list[str]
    log: Path
    proc: subprocess.Popen[bytes] | None = None
    paused: bool = False

    def start(self) -> None:
        with self.log.open("ab") as sink:
            sink.write(b"\n==== start ====\n")
            self._seen = self.log.stat().st_size
            self.proc = subprocess.Popen(self.argv, cwd=REPO, stdout=sink, stderr=subprocess.STDOUT)
        self.paused = False

    def booted(self) -> bool:
        assert self.proc is not None and self.proc.poll() is None, f"{self.name} exited, see {self.log}"
        with self.log.open("rb") as f:
            f.seek(self._seen)
            return b"boot success" in f.read()

    @property
    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def signal(self, sig: int) -> None:
        if self.alive:
            assert self.proc is not None
            with contextlib.suppress(ProcessLookupError):
                self.proc.send_signal(sig)

    def kill9(self) -> None:
        if self.proc is not None:
            self.signal(signal.SIGCONT)
            self.signal(signal.SIGKILL)
            self.proc.wait(timeout=10)
        self.paused = False


def _props(path: Path, settings: dict[str, Any]) -> Path:
    path.write_text("".join(f"{k}={v}\n" for k, v in settings.items()))
    return path


@dataclass
class Cluster:
    net: Network
    work: Path
    broker_extra: dict[str, Any] = field(default_factory=dict)
    procs: dict[str, NodeProc] = field(default_factory=dict)

    def ip(self, name: str) -> str:
        return self.net.nodes[name].ip

    def addr(self, name: str) -> str:
        port = {"ns": 9876, **dict.fromkeys(CONTROLLERS, CONTROLLER_PORT)}.get(name, BROKER_PORT)
        return f"{self.ip(name)}:{port}"

    @property
    def ns_addr(self) -> str:
        return self.addr("ns")

    @property
    def controller_addrs(self) -> list[str]:
        return [self.addr(c) for c in CONTROLLERS]

    def broker_of(self, addr: str) -> str | None:
        return next((b for b in BROKERS if self.addr(b) == addr), None)

    def _argv(self, name: str) -> list[str]:
        d = self.work / name
        d.mkdir(parents=True, exist_ok=True)
        if name == "ns":
            conf = _props(d / "namesrv.conf", {"listenPort": 9876, "listenAddress": self.ip(name), "logDir": d})
            module = "namesrv"
        elif name in CONTROLLERS:
            peers = ";".join(f"n{i}-{self.addr(c)}" for i, c in enumerate(CONTROLLERS))
            conf = _props(
                d / "controller.conf",
                {
                    "controllerDLegerGroup": "chaos",
                    "controllerDLegerPeers": peers,
                    "controllerDLegerSelfId": f"n{CONTROLLERS.index(name)}",
                    "controllerStorePath": d / "store",
                    "listenAddress": self.ip(name),
                    "logDir": d,
                },
            )
            module = "controller"
        else:
            settings: dict[str, Any] = {
                "brokerClusterName": CLUSTER,
                "brokerName": GROUP,
                "listenPort": BROKER_PORT,
                "haListenPort": BROKER_PORT + 1,
                "bindAddress": self.ip(name),
                "brokerIP1": self.ip(name),
                "namesrvAddr": self.ns_addr,
                "storePathRootDir": d / "store",
                "logDir": d,
                "mappedFileSizeCommitLog": 4 * 1024 * 1024,
                "mappedFileSizeConsumeQueue": 30_000 * 20,
                "enableControllerMode": "true",
                "controllerAddr": ";".join(self.controller_addrs),
                "allAckInSyncStateSet": "true",
                "minInSyncReplicas": 2,
                **self.broker_extra,
            }
            conf = _props(d / "broker.conf", settings)
            module = "broker"
        return [*self.net.exec_prefix(name), sys.executable, "-m", module, "-c", str(conf)]

    async def start(self) -> None:
        for name, index in INDEX.items():
            self.net.add(name, index)
        for name in ["ns", *CONTROLLERS, *BROKERS]:
            self.procs[name] = NodeProc(name, self._argv(name), self.work / f"{name}.out")
            self.procs[name].start()
        for p in self.procs.values():
            await eventually(p.booted, timeout=60, what=f"{p.name} to boot (see {p.log})", step=0.1)

    async def restart(self, name: str) -> None:
        p = self.procs[name]
        p.kill9()
        p.start()
        await eventually(p.booted, timeout=60, what=f"{name} to boot again (see {p.log})", step=0.1)

    def kill9(self, name: str) -> None:
        self.procs[name].kill9()

    def pause(self, name: str) -> None:
        self.procs[name].signal(signal.SIGSTOP)
        self.procs[name].paused = True

    def resume(self, name: str) -> None:
        self.procs[name].signal(signal.SIGCONT)
        self.procs[name].paused = False

    def stop_all(self) -> None:
        for p in self.procs.values():
            p.kill9()

    # -- views -----------------------------------------------------------------------------------------------------

    async def controller_view(self, admin: AdminClient, name: str) -> dict[str, Any]:
        """The broker's own controller-mode view (role, writable, masterEpoch, syncStateSet); {} when it cannot
        answer within a second."""
        if not self.procs[name].alive or self.procs[name].paused:
            return {}
        try:
            resp = await admin.call(self.addr(name), RequestCode.GET_BROKER_HA_STATUS, timeout=1.0)
            return dict(json.loads(resp.body).get("controller") or {})
        except Exception:
            return {}

    async def master(self, admin: AdminClient, min_sss: int = 1, exclude: str = "") -> str | None:
        """The one writable master whose SyncStateSet has at least ``min_sss`` members (None unless exactly one),
        not ``exclude``."""
        found = []
        for b in BROKERS:
            if b == exclude:
                continue
            v = await self.controller_view(admin, b)
            if v.get("role") == "MASTER" and v.get("writable") and len(v.get("syncStateSet") or []) >= min_sss:
                found.append(b)
        return found[0] if len(found) == 1 else None

    async def controller_leader(self) -> str | None:
        """The controller that says it leads (by node name)."""
        client = RemotingClient()
        try:
            for c in CONTROLLERS:
                if not self.procs[c].alive or self.procs[c].paused:
                    continue
                cmd = RemotingCommand.request(
                    RequestCode.CONTROLLER_GET_METADATA_INFO, {}, serialize_type=SerializeType.JSON
                )
                try:
                    resp = await client.invoke(self.addr(c), cmd, 1.0)
                except Exception:
                    continue
                if GetMetaDataResponseHeader.from_ext_fields(resp.ext_fields).is_leader:
                    return c
            return None
        finally:
            await client.close()

    async def wait_master(self, admin: AdminClient, min_sss: int, timeout: float, exclude: str = "") -> str:
        name: str = await eventually(
            lambda: self.master(admin, min_sss, exclude),
            timeout=timeout,
            what=f"one master with a SyncStateSet >= {min_sss}" + (f" other than {exclude}" if exclude else ""),
            step=0.2,
        )
        return name
