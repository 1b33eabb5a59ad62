"""The chaos suite's nemesis: the faults a run injects into a running ``Cluster`` and how each is healed.

===========================  ===========================================================================================
scenario                     fault → heal
===========================  ===========================================================================================
kill-master                  kill -9 of the master → restarted (it must rejoin as a slave, cutting only unconfirmed
                             records)
kill-controller              kill -9 of the controllers' Raft leader → restarted (rejoins from its journal)
isolate-master               the master's link goes down (no one reaches it, clients neither) → up
master-from-controllers      the master cannot reach any controller, clients still reach it → healed
split-controllers            the controllers' leader cut from the other two (minority / majority) → healed
pause-master                 SIGSTOP of the master → SIGCONT
===========================  ===========================================================================================

``inject`` returns the victim (a node name) and is called at the fault time; ``heal`` undoes it.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from client.admin.admin_client import AdminClient
from tests.chaos.nodes import CONTROLLERS, Cluster


@dataclass(frozen=True)
class Scenario:
    name: str
    inject: Callable[[Cluster, AdminClient, str], Awaitable[str]]  # (cluster, admin, master) → victim
    heal: Callable[[Cluster, str], Awaitable[None]]  # (cluster, victim)
    master_changes: bool  # the master is expected to change (the run waits for a new one)


async def _kill(c: Cluster, _a: AdminClient, master: str) -> str:
    c.kill9(master)
    return master


async def _restart(c: Cluster, victim: str) -> None:
    await c.restart(victim)


async def _kill_controller(c: Cluster, _a: AdminClient, _m: str) -> str:
    victim = await c.controller_leader() or CONTROLLERS[0]
    c.kill9(victim)
    return victim


async def _isolate(c: Cluster, _a: AdminClient, master: str) -> str:
    c.net.isolate(master)
    return master


async def _cut_from_controllers(c: Cluster, _a: AdminClient, master: str) -> str:
    c.net.cut([master], CONTROLLERS)
    return master


async def _split_controllers(c: Cluster, _a: AdminClient, _m: str) -> str:
    leader = await c.controller_leader() or CONTROLLERS[0]
    c.net.cut([leader], [x for x in CONTROLLERS if x != leader])
    return leader


async def _heal_net(c: Cluster, _victim: str) -> None:
    c.net.heal()


async def _pause(c: Cluster, _a: AdminClient, master: str) -> str:
    c.pause(master)
    return master


async def _resume(c: Cluster, victim: str) -> None:
    c.resume(victim)


SCENARIOS: dict[str, Scenario] = {
    s.name: s
    for s in (
        Scenario("kill-master", _kill, _restart, True),
        Scenario("kill-controller", _kill_controller, _restart, False),
        Scenario("isolate-master", _isolate, _heal_net, True),
        Scenario("master-from-controllers", _cut_from_controllers, _heal_net, True),
        Scenario("split-controllers", _split_controllers, _heal_net, False),
        Scenario("pause-master", _pause, _resume, True),
    )
}
