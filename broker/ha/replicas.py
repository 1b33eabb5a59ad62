"""Controller mode (``enableControllerMode=true``; J's ``ReplicasManager``): this broker's role comes from a
controller (RocketMQ 5's, or any that speaks its codes), not from ``brokerRole``.

Start (J 5.5.0's order): ask each ``controllerAddr`` for the leader (CONTROLLER_GET_METADATA_INFO); take the
replica id kept in ``brokerIdentity`` or obtain one (CONTROLLER_GET_NEXT_BROKER_ID, then
CONTROLLER_APPLY_BROKER_ID, then persist it); CONTROLLER_REGISTER_BROKER answers the group's master, epoch and
SyncStateSet; with no master yet, CONTROLLER_ELECT_MASTER. Then, in the background: BROKER_HEARTBEAT every
``brokerHeartbeatInterval`` (carrying the last epoch, log end and confirm offset), CONTROLLER_GET_REPLICA_INFO
every ``syncBrokerMetadataPeriod`` (a master: every heartbeat, see the lease), the SyncStateSet check every
``checkSyncStateSetPeriod`` (``broker.ha.sync_state``), and NOTIFY_BROKER_ROLE_CHANGED from the controller at once.

Role changes (``apply``): a view with a newer master epoch naming this replica makes it master — it cuts a partial
record at its end, records ``<epoch, end>`` in the epoch file, closes any old slave connections, registers with the
name servers as id 0; naming another replica makes it a slave of that one — it stops taking writes, registers
under its replica id, and its HA client opens each connection with the epoch handshake, cutting what its new
master never had (``handshake``; the master's last epoch must be the one the controller named, so a deposed master
that still listens is never followed). Consumers read a master's log only up to its SyncStateSet's confirm offset
(the store's dispatch gate); a master that learns it was deposed keeps its last confirm offset as that bound until
the handshake has cut its log to agree with the new master's — never its own log end: a held pull woken by the
unconfirmed tail would move a consumer past the new master's records at the same queue offsets.

**The write lease** (no two writable masters): a controller elects a new master only after this broker's
heartbeats stopped for ``controllerHeartBeatTimeoutMills`` (or the connection to it closed). A master takes writes
only until ``h + timeout - margin``, where ``h`` is when the last *answered* heartbeat was sent and ``margin`` covers
the answer's delay and the check interval; a heartbeat renews it only while it is still valid, and after a lapse
(or a lost connection, or on becoming master) only a CONTROLLER_GET_REPLICA_INFO sent after an answered heartbeat
that still names this replica master at its epoch grants it again. The store checks the deadline on every put
(``MessageStore.write_deadline``), so a master that was paused (SIGSTOP) or cut off refuses writes by then —
before a controller could have elected anyone else. An operator's ``electMaster`` reaches the old master by
NOTIFY_BROKER_ROLE_CHANGED (J's behaviour); if that message is lost, the next replica-info check deposes it.
"""

from __future__ import annotations

import asyncio
import json
import logging
import math
import os
import time
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from typing import Any

from broker.ha.controller_api import ControllerApi, ControllerError, MasterView
from broker.ha.epoch_file import EpochFile, entries_of, truncation_point
from broker.ha.master import HAMaster
from broker.ha.slave import HAClient
from broker.ha.sync_state import AckRule, SyncStateTracker
from broker.store.message_store import MessageStore
from broker.store.results import CONTROLLER_REFUSAL
from protocol.codes import ResponseCode
from protocol.errors import ConnectionClosedError, RemotingError
from protocol.headers.controller import BrokerHeartbeatRequestHeader
from runtime.tasks import stop_tasks

_log = logging.getLogger("rocketq.broker.ha.replicas")

NO_ROLE = CONTROLLER_REFUSAL + "no role from the controller yet"
SLAVE_ROLE = CONTROLLER_REFUSAL + "this broker is a slave; its master is {}"
LEASE_LOST = (
    CONTROLLER_REFUSAL + "this master (epoch {}) has no answered controller heartbeat for {} ms; it takes no writes "
    "until the controller confirms it is still the master"
)
ISR_SHORT = CONTROLLER_REFUSAL + "in-sync replicas not enough ({} in the SyncStateSet, minInSyncReplicas={})"
IDENTITY_FILE = "brokerIdentity"


@dataclass(frozen=True, slots=True)
class ReplicasConfig:
    cluster: str
    broker_name: str
    controller_addrs: list[str]
    heartbeat_s: float = 1.0
    heartbeat_timeout_s: float = 1.0  # sendHeartbeatTimeoutMillis
    lease_s: float = 10.0  # controllerHeartBeatTimeoutMills
    sync_metadata_s: float = 5.0
    check_sss_s: float = 5.0
    election_priority: int = 2**31 - 1
    min_in_sync_replicas: int = 1
    identity_path: str = ""


class ReplicasManager:
    def __init__(
        self,
        cfg: ReplicasConfig,
        rule: AckRule,
        api: ControllerApi,
        store: MessageStore,
        master: HAMaster,
        slave: HAClient,
        epochs: EpochFile,
        own_addr: Callable[[], str],
        on_role: Callable[[int], Coroutine[Any, Any, None]],
    ) -> None:
        self.cfg = cfg
        self.api = api
        self.store = store
        self.master = master
        self.slave = slave
        self.epochs = epochs
        self._own_addr = own_addr
        self._on_role = on_role  # the id to register with the name servers now (0: master), re-registers
        self.broker_id = -1
        self.leader = ""
        self.role = "NONE"  # NONE, MASTER, SLAVE
        self.master_epoch = 0
        self.master_id: int | None = None
        self.master_addr = ""
        self.tracker = SyncStateTracker(
            rule, lambda: self.broker_id, self._epoch_start, lambda: store.commitlog.max_offset, self._report_sss
        )
        self._last_hb_ok = -math.inf  # monotonic send time of the last answered heartbeat
        self._hb_conn: object | None = None  # the connection that answered it
        self._lease_until = -math.inf
        self._lease_valid = False
        self._task: asyncio.Task[None] | None = None
        self._side: set[asyncio.Task[None]] = set()
        self._lock = asyncio.Lock()
        self.elections_seen = 0
        # the answer's delay (at most the heartbeat timeout) plus one tick of the loop, twice over; at most half the lease
        self._margin = min(cfg.heartbeat_timeout_s * 2 + cfg.heartbeat_s, cfg.lease_s / 2)
        # a deposed master's last confirm offset, until its log agrees with the new master's (``handshake``)
        self._deposed_bound: int | None = None
        store.dispatcher.confirmed = self._confirm_offset  # consumers read only what a SyncStateSet confirmed
        master.epochs = epochs.pairs
        master.serving = False
        master.transfer.policy = self.tracker
        slave.handshake = self.handshake

    # -- lifecycle ---------------------------------------------------------------------------------------------------

    def start(self) -> None:
        self._gate()
        self._task = asyncio.get_running_loop().create_task(self._run(), name="replicas-manager")

    async def stop(self) -> None:
        task, self._task = self._task, None
        await stop_tasks(task, *self._side)

    async def _run(self) -> None:
        while not await self._start_once():
            await asyncio.sleep(self.cfg.heartbeat_s)
        loop = asyncio.get_running_loop()
        next_sync = next_check = loop.time()
        while True:
            await self._heartbeat()
            now = loop.time()
            if self.role == "MASTER" or now >= next_sync:
                next_sync = now + self.cfg.sync_metadata_s
                await self._sync_metadata()
            if self.role == "MASTER" and now >= next_check:
                next_check = now + self.cfg.check_sss_s
                self._check_sss()
            self._gate()
            await asyncio.sleep(self.cfg.heartbeat_s)

    async def _start_once(self) -> bool:
        try:
            if not await self._find_leader():
                return False
            if self.broker_id < 0:
                self.broker_id = await self._obtain_id()
            self.slave.broker_id = self.broker_id
            asked = time.monotonic()  # the lease needs a confirmation asked after an answered heartbeat: not this one
            view = await self.api.register(self.leader, self.broker_id, self._own_addr())
            await self._heartbeat()
            if view.master_broker_id is None:
                view = await self.api.elect(self.leader, self.broker_id)
            await self.apply(view, asked)
            return self.role != "NONE"
        except (RemotingError, ControllerError, OSError) as exc:
            _log.warning("controller registration failed (retrying): %s", exc)
            return False

    async def _find_leader(self) -> bool:
        for addr in self.cfg.controller_addrs:
            try:
                leader = await self.api.leader(addr)
            except (RemotingError, ControllerError) as exc:
                _log.info("controller %s: %s", addr, exc)
                continue
            if leader:
                if leader != self.leader:
                    _log.info("controller leader is %s", leader)
                self.leader = leader
                return True
        return False

    # -- the replica id (J's brokerIdentity / temp metadata, kept as JSON) --------------------------------------------

    async def _obtain_id(self) -> int:
        path = self.cfg.identity_path
        try:
            with open(path, encoding="utf-8") as f:
                doc = json.load(f)
            if doc.get("clusterName") == self.cfg.cluster and doc.get("brokerName") == self.cfg.broker_name:
                return int(doc["brokerId"])
            _log.error(
                "%s names another broker group (%s/%s): asking the controller for a new id",
                path,
                doc.get("clusterName"),
                doc.get("brokerName"),
            )
        except FileNotFoundError:
            pass
        except (ValueError, KeyError, TypeError) as exc:
            _log.error("%s unreadable (%s): asking the controller for a new id", path, exc)
        bid = await self.api.next_broker_id(self.leader)
        await self.api.apply_broker_id(self.leader, bid, f"{self._own_addr()};{int(time.time() * 1000)}")
        tmp = path + ".tmp"
        with open(tmp, "w", encoding="utf-8") as f:
            json.dump({"clusterName": self.cfg.cluster, "brokerName": self.cfg.broker_name, "brokerId": bid}, f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
        _log.info("replica id %d assigned by the controller", bid)
        return bid

    # -- heartbeat and lease -----------------------------------------------------------------------------------------

    async def _heartbeat(self) -> bool:
        loop = asyncio.get_running_loop()
        sent = time.monotonic()
        header = BrokerHeartbeatRequestHeader(
            self.cfg.cluster,
            self._own_addr(),
            self.cfg.broker_name,
            self.broker_id,
            self.epochs.last_epoch,
            self.store.commitlog.max_offset,
            self._confirm_offset(),
            int(self.cfg.lease_s * 1000),
            self.cfg.election_priority,
        )
        del loop
        try:
            await self.api.heartbeat(self.leader, header, self.cfg.heartbeat_timeout_s)
        except ConnectionClosedError as exc:
            # the controller may treat a closed channel as this broker's death and elect at once
            self._lease_valid = False
            _log.warning("controller connection lost: %s", exc)
            self._gate()
            await self._find_leader()
            return False
        except (RemotingError, ControllerError) as exc:
            _log.info("heartbeat to controller %s failed: %s", self.leader, exc)
            if isinstance(exc, ControllerError) and exc.code == ResponseCode.CONTROLLER_NOT_LEADER:
                await self._find_leader()
            return False
        self._last_hb_ok = sent
        conn = self.api.connection(self.leader)
        if conn is not self._hb_conn:  # a new connection: the controller may have seen the old one close and elected
            self._hb_conn = conn
            self._lease_valid = False
        if self._lease_valid and sent <= self._lease_until:
            self._lease_until = sent + self.cfg.lease_s - self._margin
        else:
            self._lease_valid = False
        return True

    def lease_lapsed(self) -> bool:
        """A master whose lease ran out (it was paused or cut off): another may be master by now."""
        return self.role == "MASTER" and not (self._lease_valid and time.monotonic() <= self._lease_until)

    def _grant_lease(self, asked_at: float) -> None:
        """A replica-info (or register/elect) answer sent at ``asked_at`` names this replica master at its epoch."""
        if self._last_hb_ok <= asked_at and self._last_hb_ok > asked_at - (self.cfg.lease_s - self._margin):
            self._lease_valid = True
            self._lease_until = self._last_hb_ok + self.cfg.lease_s - self._margin

    def _gate(self) -> None:
        """Set the store's refusal (or lease deadline) from the role, the lease and the SyncStateSet."""
        store = self.store
        if self.role == "NONE":
            store.refuse_puts(NO_ROLE)
            return
        if self.role == "SLAVE":
            store.refuse_puts(SLAVE_ROLE.format(self.master_addr or "unknown"))
            return
        if len(self.tracker.members) < self.cfg.min_in_sync_replicas:
            store.refuse_puts(ISR_SHORT.format(len(self.tracker.members), self.cfg.min_in_sync_replicas))
            return
        silent = time.monotonic() - self._last_hb_ok
        store.lease_remark = LEASE_LOST.format(self.master_epoch, int(silent * 1000) if math.isfinite(silent) else -1)
        store.write_deadline = self._lease_until if self._lease_valid else -math.inf
        if store.puts_refused is not None:
            store.refuse_puts(None)

    @property
    def writable(self) -> bool:
        return (
            self.role == "MASTER" and self.store.puts_refused is None and time.monotonic() <= self.store.write_deadline
        )

    # -- metadata ------------------------------------------------------------------------------------------------------

    async def _sync_metadata(self) -> None:
        asked = time.monotonic()
        try:
            view = await self.api.replica_info(self.leader)
        except ControllerError as exc:
            if exc.code == ResponseCode.CONTROLLER_BROKER_METADATA_NOT_EXIST:
                await self._start_once()
            else:
                _log.info("replica info from %s: %s", self.leader, exc)
                if exc.code == ResponseCode.CONTROLLER_NOT_LEADER:
                    # a follower still answers heartbeats: without this a broker would keep heartbeating a deposed
                    # leader, unheard by the new one (which then cannot elect it)
                    await self._find_leader()
            return
        except RemotingError as exc:
            _log.info("replica info from %s failed: %s", self.leader, exc)
            return
        if (view.master_broker_id is None or not view.master_address) and view.master_epoch >= self.master_epoch:
            if self.role == "MASTER":
                self._leave_master()
                self.role = "NONE"
            self._gate()
            try:
                view = await self.api.elect(self.leader, self.broker_id)
            except (RemotingError, ControllerError) as exc:
                _log.info("election request refused: %s", exc)
                return
        await self.apply(view, asked)

    async def apply(self, view: MasterView, asked_at: float | None = None) -> None:
        """Adopt a controller's view of the group (J ``changeBrokerRole`` and the periodic metadata sync)."""
        async with self._lock:
            asked = time.monotonic() if asked_at is None else asked_at
            if view.master_broker_id is None or view.master_epoch < self.master_epoch:
                return
            if view.master_epoch > self.master_epoch or self.role == "NONE":
                self.elections_seen += view.master_epoch > self.master_epoch
                if view.master_broker_id == self.broker_id:
                    await self._become_master(view)
                else:
                    await self._become_slave(view)
            elif (
                self.role == "MASTER"
                and view.master_broker_id == self.broker_id
                and self.tracker.adopt(view.sync_state_set, view.sync_state_set_epoch)
            ):
                _log.info("SyncStateSet %s (epoch %d)", sorted(view.sync_state_set), view.sync_state_set_epoch)
            if (
                self.role == "MASTER"
                and view.master_broker_id == self.broker_id
                and view.master_epoch == self.master_epoch
            ):
                self._grant_lease(asked)
            self._gate()

    async def _become_master(self, view: MasterView) -> None:
        store = self.store
        self._lease_valid = False
        self.role = "MASTER"  # refused until the lease is granted (``_gate``)
        self._gate()
        await self.slave.stop()
        end = store.replica_dispatched_offset
        if end < store.commitlog.max_offset:
            store.truncate_to(end)  # a partial record copied last
        end = store.commitlog.max_offset
        self.epochs.truncate_suffix_by_offset(end + 1)  # epochs this replica had heard of but holds nothing of
        if self.epochs.last_epoch > view.master_epoch:
            self.epochs.truncate_suffix_by_epoch(view.master_epoch + 1)
        if self.epochs.last_epoch != view.master_epoch:  # the same epoch again (a restart): its start stays
            self.epochs.append(view.master_epoch, end)
        self.master.drop_all()
        self.master.serving = True
        self.master_epoch, self.master_id, self.master_addr = view.master_epoch, self.broker_id, self._own_addr()
        self.tracker.adopt(view.sync_state_set, view.sync_state_set_epoch)
        self._deposed_bound = None  # the set bounds reads again (``_confirm_offset``)
        _log.warning(
            "now MASTER of %s at epoch %d (log end %d, SyncStateSet %s)",
            self.cfg.broker_name, view.master_epoch, end, sorted(view.sync_state_set),
        )  # fmt: skip
        self._spawn(self._on_role(0), "register-as-master")

    async def _become_slave(self, view: MasterView) -> None:
        self._lease_valid = False
        was_master = self.role == "MASTER"
        if was_master:
            self._leave_master()
        if view.master_address != self.master_addr and not self.slave.cfg.fixed_master:
            # not the old master's HA address: a paused or cut-off master still accepts the TCP connect and would
            # hold this slave for haHousekeepingInterval (20 s) — the new set could not grow, writes wait. The new
            # one's HA address comes with the name-server registration (J: updateHaMasterAddress(null))
            self.slave.state.master_ha_addr = None
        self.role = "SLAVE"
        self.master_epoch, self.master_id, self.master_addr = (
            view.master_epoch,
            view.master_broker_id,
            view.master_address,
        )
        self._gate()
        self.master.serving = False
        self.master.drop_all()
        _log.warning(
            "now SLAVE of %s (replica %s) at epoch %d%s",
            view.master_address, view.master_broker_id, view.master_epoch, " (was master)" if was_master else "",
        )  # fmt: skip
        await self.slave.stop()
        self.slave.state.master_addr = view.master_address
        self.slave.start()
        self._spawn(self._on_role(self.broker_id), "register-as-slave")

    def handshake(self, master_end: int, table: list[tuple[int, int]]) -> None:
        """Called by the HA client with its master's end and epoch table: cut this log where they stop agreeing."""
        if self.role != "SLAVE":
            raise ValueError("not a slave any more")
        last = table[-1][0] if table else -1
        if last != self.master_epoch:
            raise ValueError(
                f"that master's last epoch is {last}, the controller's master has epoch {self.master_epoch}"
            )
        store = self.store
        local_end = store.commitlog.max_offset
        cut = truncation_point(self.epochs.entries(), local_end, entries_of(table), master_end)
        if cut < 0:
            raise ValueError(
                "this log shares no epoch with the master's: refusing to replicate (an operator must clear this "
                "replica's store, see README)"
            )
        if cut < local_end:
            _log.warning("log diverged from master at %d: cutting %d bytes it never had", cut, local_end - cut)
            if self._deposed_bound is not None:
                self._deposed_bound = cut  # what stays is the new master's: dispatched before the cut, the rest dropped
            store.truncate_to(cut)
        self.epochs.replace(table)
        if self._deposed_bound is not None:
            _log.info("log agrees with master %s: consumers may read all of it again", self.master_addr)
            self._deposed_bound = None
            store.dispatcher.drain()

    # -- SyncStateSet --------------------------------------------------------------------------------------------------

    def _epoch_start(self) -> int:
        last = self.epochs.entries()
        return last[-1].start_offset if last else 0

    def _confirm_offset(self) -> int:
        """The dispatch gate (consumers read up to here) and the heartbeat's confirm offset: a master's SyncStateSet
        confirm offset; a deposed master's last one until its log agrees with the new master's; a slave's log end
        (everything it holds came from its master)."""
        if self.role == "MASTER":
            return self.tracker.confirm_offset(list(self.master.state.links.values()), self.store.commitlog.max_offset)
        if self._deposed_bound is not None:
            return self._deposed_bound
        return self.store.commitlog.max_offset

    def _leave_master(self) -> None:
        """This master learns it was deposed: freeze the read bound at its last confirm offset, at once. What lies past
        it was never confirmed by the set and the new master may not hold it; the handshake with the new master cuts
        it. Lifting the gate here would wake held pulls with those records (a consumer's next offset would then skip
        the new master's records stored at the same queue offsets)."""
        if self._deposed_bound is None:
            self._deposed_bound = self._confirm_offset()
            _log.warning(
                "deposed: consumers read up to %d until the log agrees with the new master's (log end %d)",
                self._deposed_bound,
                self.store.commitlog.max_offset,
            )

    def _check_sss(self) -> None:
        new = self.tracker.shrunk(list(self.master.state.links.values()))
        if new is not None:
            _log.warning("SyncStateSet shrinks %s → %s", sorted(self.tracker.members), sorted(new))
            self._report_sss(new)

    def _report_sss(self, new: set[int]) -> None:
        self._spawn(self._alter(new), "alter-sync-state-set")

    def _spawn(self, coro: Coroutine[Any, Any, None], name: str) -> None:
        """Off the heartbeat loop: a slow name server or controller call must not stall the lease."""
        task = asyncio.get_running_loop().create_task(coro, name=name)
        self._side.add(task)
        task.add_done_callback(self._side.discard)

    async def _alter(self, new: set[int]) -> None:
        try:
            got = await self.api.alter_sync_state_set(
                self.leader, self.broker_id, self.master_epoch, new, self.tracker.epoch
            )
        except (RemotingError, ControllerError) as exc:
            _log.warning("ALTER_SYNC_STATE_SET %s refused: %s", sorted(new), exc)
            self.tracker.refused(self.cfg.check_sss_s)
            return
        if self.tracker.adopt(frozenset(got.sync_state_set), got.sync_state_set_epoch):
            _log.info("SyncStateSet now %s (epoch %d)", sorted(got.sync_state_set), got.sync_state_set_epoch)
        self._gate()

    # -- views -----------------------------------------------------------------------------------------------------------

    def status(self) -> dict[str, object]:
        return {
            "controllerMode": True,
            "controllerLeader": self.leader,
            "brokerControllerId": self.broker_id,
            "role": self.role,
            "masterEpoch": self.master_epoch,
            "masterBrokerId": self.master_id if self.master_id is not None else -1,
            "masterAddress": self.master_addr,
            "syncStateSet": sorted(self.tracker.members),
            "syncStateSetEpoch": self.tracker.epoch,
            "epochs": [[e, s] for e, s in self.epochs.pairs()],
            "writable": self.writable,
            "fence": self.store.puts_refused or ("" if self.writable else self.store.lease_remark),
        }
