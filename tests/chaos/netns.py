"""The chaos suite's network: one Linux network namespace per node, each joined to a bridge in the host namespace by
a veth pair, so every node has its own address (``<subnet>.x/24``; the host end, where the test's clients run, is .1).

The network's identity (names, subnet, lock) comes from env ``ROCKETQ_CHAOS_NET``: unset, the default one below;
``ROCKETQ_CHAOS_NET=<k>`` (an integer 1..99) a second one that can run beside it (e.g. two checkouts on one machine).

==============  ====================================  ==========================================================
object          default                               ``ROCKETQ_CHAOS_NET=<k>``
==============  ====================================  ==========================================================
bridge          ``rqcbr0``, 10.77.0.1/24              ``rq<k>br0``, 10.78.<k>.1/24
namespace       ``rqc-<node>`` (``lo``, ``eth0`` up)  ``rq<k>-<node>``
veth pair       ``rqc<n>h`` ↔ ``eth0`` (in the ns)     ``rq<k>v<n>`` ↔ ``eth0``
node address    10.77.0.<n>/24                        10.78.<k>.<n>/24
lock (flock)    /tmp/rocketq-chaos-netns.lock         /tmp/rocketq-chaos-netns-<k>.lock
==============  ====================================  ==========================================================

Faults (the machine has no iptables/nft): ``cut(a, b)`` adds ``blackhole <addr>/32`` routes inside both sides'
namespaces, so packets between them vanish both ways (connections stall, as in a real partition); ``isolate(node)``
downs the node's veth (it reaches no one, not even the clients); ``heal()`` undoes both. ``Network.create`` raises
``NetnsUnavailable`` when this process may not create namespaces; the fixture turns that into a skip. One network
of an identity exists at a time on a machine: ``create`` waits for its lock, which ``destroy`` releases.
"""

from __future__ import annotations

import fcntl
import os
import subprocess
from dataclasses import dataclass, field
from typing import IO


@dataclass(frozen=True)
class Identity:
    """The names, subnet and lock of one chaos network (see the table above)."""

    subnet: str  # the first three octets
    bridge: str
    prefix: str  # of the namespaces
    veth: str  # the host ends are <veth><n><veth_suffix>
    veth_suffix: str
    lock: str

    def host_end(self, index: int) -> str:
        return f"{self.veth}{index}{self.veth_suffix}"

    def owns_link(self, name: str) -> bool:
        rest = name[len(self.veth) :] if name.startswith(self.veth) else ""
        if not rest.endswith(self.veth_suffix):
            return False
        digits = rest[: len(rest) - len(self.veth_suffix)] if self.veth_suffix else rest
        return digits.isdigit()


def identity(env: str | None = None) -> Identity:
    """The identity env ``ROCKETQ_CHAOS_NET`` selects (``env`` overrides it; unset or empty: the default)."""
    k = os.environ.get("ROCKETQ_CHAOS_NET", "") if env is None else env
    if not k:
        return Identity("10.77.0", "rqcbr0", "rqc-", "rqc", "h", "/tmp/rocketq-chaos-netns.lock")
    if not k.isdigit() or not 1 <= int(k) <= 99:
        raise ValueError(f"ROCKETQ_CHAOS_NET must be an integer 1..99, not {k!r}")
    n = int(k)
    return Identity(f"10.78.{n}", f"rq{n}br0", f"rq{n}-", f"rq{n}v", "", f"/tmp/rocketq-chaos-netns-{n}.lock")


NET = identity()


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
        return f"{NET.prefix}{self.name}"

    @property
    def ip(self) -> str:
        return f"{NET.subnet}.{self.index}"


@dataclass
class Network:
    nodes: dict[str, Node] = field(default_factory=dict)
    _routes: set[tuple[str, str]] = field(default_factory=set)  # (namespace, blackholed address)
    _downed: set[str] = field(default_factory=set)
    _lock: IO[bytes] | None = None

    @staticmethod
    def create() -> Network:
        """The bridge, after removing whatever a killed earlier run left behind (once no other run holds the lock)."""
        lock = open(NET.lock, "ab")  # noqa: SIM115 - held until destroy()
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
        probe = f"{NET.prefix}probe"
        r = _ip("netns", "add", probe, check=False)
        if r.returncode != 0:
            raise NetnsUnavailable(f"`ip netns add` is not permitted here: {r.stderr.strip()}")
        _ip("netns", "del", probe, check=False)
        _ip("link", "add", NET.bridge, "type", "bridge")
        _ip("addr", "add", f"{NET.subnet}.1/24", "dev", NET.bridge)
        _ip("link", "set", NET.bridge, "up")
        return Network()

    def add(self, name: str, index: int) -> Node:
        node = Node(name, index)
        host_end = NET.host_end(index)
        _ip("netns", "add", node.ns)
        _ip("link", "add", host_end, "type", "veth", "peer", "name", "eth0", "netns", node.ns)
        _ip("link", "set", host_end, "master", NET.bridge, "up")
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
            _ip("link", "del", NET.host_end(node.index), check=False)  # at once: a namespace's deletion is lazy
            _ip("netns", "del", node.ns, check=False)
        self.nodes.clear()
        _ip("link", "del", NET.bridge, check=False)
        if self._lock is not None:
            self._lock.close()  # releases the flock
            self._lock = None


def cleanup_leftovers() -> None:
    """Delete this identity's namespaces, veths and bridge (a run killed before its teardown leaves them)."""
    links = _ip("-o", "link", "show", check=False).stdout
    for line in links.splitlines():
        name = line.split(":")[1].strip().split("@")[0] if line.count(":") >= 2 else ""
        if NET.owns_link(name):
            _ip("link", "del", name, check=False)
    r = _ip("netns", "list", check=False)
    for line in r.stdout.splitlines():
        name = line.split()[0] if line.split() else ""
        if name.startswith(NET.prefix):
            _ip("netns", "del", name, check=False)
    _ip("link", "del", NET.bridge, check=False)
