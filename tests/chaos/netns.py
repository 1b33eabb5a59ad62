"""The chaos suite's network: one Linux network namespace per node, each joined to a bridge in the host namespace by
a veth pair, so every node has its own address (10.77.0.x/24; the host end, where the test's clients run, is .1).

==============  ==========================================================================================
object          name / address
==============  ==========================================================================================
bridge          ``rqcbr0`` in the host namespace, 10.77.0.1/24
namespace       ``rqc-<node>`` with ``lo`` up and ``eth0`` (10.77.0.<n>/24)
veth pair       ``rqc<n>h`` (host side, on the bridge) ↔ ``eth0`` (in the namespace)
==============  ==========================================================================================

Faults (the machine has no iptables/nft): ``cut(a, b)`` adds ``blackhole <addr>/32`` routes inside both sides'
namespaces, so packets between them vanish both ways (connections stall, as in a real partition); ``isolate(node)``
downs the node's veth (it reaches no one, not even the clients); ``heal()`` undoes both. ``Network.create`` raises
``NetnsUnavailable`` when this process may not create namespaces; the fixture turns that into a skip. The names
and the subnet are fixed, so one network exists at a time on a machine: ``create`` waits for ``LOCK`` (flock), which
``destroy`` releases.
"""

from __future__ import annotations

import fcntl
import subprocess
from dataclasses import dataclass, field
from typing import IO

SUBNET = "10.77.0"
BRIDGE = "rqcbr0"
PREFIX = "rqc-"
LOCK = "/tmp/rocketq-chaos-netns.lock"


class NetnsUnavailable(Exception):
    """This machine (or user) may not create network namespaces."""


def _ip(*args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["ip", *args], capture_output=True, text=True, check=check, timeout=20)


@dataclass
class Node:
    name: str
    index: int

    @property
    def ns(self) -> str:
        return f"{PREFIX}{self.name}"

    @property
    def ip(self) -> str:
        return f"{SUBNET}.{self.index}"


@dataclass
class Network:
    nodes: dict[str, Node] = field(default_factory=dict)
    _routes: set[tuple[str, str]] = field(default_factory=set)  # (namespace, blackholed address)
    _downed: set[str] = field(default_factory=set)
    _lock: IO[bytes] | None = None

    @staticmethod
    def create() -> Network:
        """The bridge, after removing whatever a killed earlier run left behind (once no other run holds LOCK)."""
        lock = open(LOCK, "ab")  # noqa: SIM115 - held until destroy()
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            net = Network._create()
        except BaseException:
            lock.close()
            raise
        net._lock = lock
        return net

    @staticmethod
    def _create() -> Network:
        cleanup_leftovers()
        probe = f"{PREFIX}probe"
        r = _ip("netns", "add", probe, check=False)
        if r.returncode != 0:
            raise NetnsUnavailable(f"`ip netns add` is not permitted here: {r.stderr.strip()}")
        _ip("netns", "del", probe, check=False)
        _ip("link", "add", BRIDGE, "type", "bridge")
        _ip("addr", "add", f"{SUBNET}.1/24", "dev", BRIDGE)
        _ip("link", "set", BRIDGE, "up")
        return Network()

    def add(self, name: str, index: int) -> Node:
        node = Node(name, index)
        host_end = f"rqc{index}h"
        _ip("netns", "add", node.ns)
        _ip("link", "add", host_end, "type", "veth", "peer", "name", "eth0", "netns", node.ns)
        _ip("link", "set", host_end, "master", BRIDGE, "up")
        _ip("-n", node.ns, "addr", "add", f"{node.ip}/24", "dev", "eth0")
        _ip("-n", node.ns, "link", "set", "eth0", "up")
        _ip("-n", node.ns, "link", "set", "lo", "up")
        self.nodes[name] = node
        return node

    def exec_prefix(self, name: str) -> list[str]:
        """The argv prefix that runs a command inside the node's namespace."""
        return ["ip", "netns", "exec", self.nodes[name].ns]

    def cut(self, side_a: list[str], side_b: list[str]) -> None:
        """No packet passes between any node of ``side_a`` and any of ``side_b`` (both directions)."""
        for a in side_a:
            for b in side_b:
                for src, dst in ((a, b), (b, a)):
                    key = (self.nodes[src].ns, self.nodes[dst].ip)
                    if key not in self._routes:
                        _ip("-n", key[0], "route", "add", "blackhole", f"{key[1]}/32")
                        self._routes.add(key)

    def isolate(self, name: str) -> None:
        """The node's link goes down: it reaches no one and no one reaches it."""
        _ip("-n", self.nodes[name].ns, "link", "set", "eth0", "down")
        self._downed.add(name)

    def heal(self) -> None:
        for ns, addr in sorted(self._routes):
            _ip("-n", ns, "route", "del", "blackhole", f"{addr}/32", check=False)
        self._routes.clear()
        for name in sorted(self._downed):
            ns = self.nodes[name].ns
            _ip("-n", ns, "link", "set", "eth0", "up")
            # downing the link dropped its connected route; bringing it up restores it with the address
        self._downed.clear()

    def destroy(self) -> None:
        self.heal()
        for node in self.nodes.values():
            _ip("link", "del", f"rqc{node.index}h", check=False)  # at once: a namespace's deletion is lazy
            _ip("netns", "del", node.ns, check=False)
        self.nodes.clear()
        _ip("link", "del", BRIDGE, check=False)
        if self._lock is not None:
            self._lock.close()  # releases the flock
            self._lock = None


def cleanup_leftovers() -> None:
    """Delete this suite's namespaces and bridge (a run killed before its teardown leaves them)."""
    links = _ip("-o", "link", "show", check=False).stdout
    for line in links.splitlines():
        name = line.split(":")[1].strip().split("@")[0] if line.count(":") >= 2 else ""
        if name.startswith("rqc") and name.endswith("h"):
            _ip("link", "del", name, check=False)
    r = _ip("netns", "list", check=False)
    for line in r.stdout.splitlines():
        name = line.split()[0] if line.split() else ""
        if name.startswith(PREFIX):
            _ip("netns", "del", name, check=False)
    _ip("link", "del", BRIDGE, check=False)
