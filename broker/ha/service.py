"""HAService: the one object ``BrokerApp`` builds for replication. It picks the parts a role needs — a master's HA
listener and SYNC_MASTER waits (``master``), a slave's HA client and metadata copy (``slave``, ``sync``) — owns
their start and stop, decides a master's start-up fence, and answers the HA admin views:

* GET_BROKER_HA_STATUS (907, 5.x's code; ``mqadmin haStatus``): a JSON body shaped like J's ``HARuntimeInfo``
  (``master``, ``masterCommitLogMaxOffset``, ``inSyncSlaveNums``, ``haConnectionInfo[]``, ``haClientRuntimeInfo``)
  plus this project's state (``fenced``, ``state``, ``aheadOfMasterBytes``).
* Controller mode (``enableControllerMode``, ``broker.ha.replicas``): every part is built — the HA listener serves
  only while the controller names this broker master, the HA client runs only while it names another — and
  ``ReplicasManager`` switches between them; NOTIFY_BROKER_ROLE_CHANGED (1008) and GET_BROKER_EPOCH_CACHE (1007,
  ``mqadmin getBrokerEpoch``) are served, and the views carry the epoch and the SyncStateSet.
* GET_BROKER_RUNTIME_INFO (28): the reply's table gains ``brokerRole``, ``brokerActive``, ``haState``,
  ``haSlaveCount``, ``haPush2SlaveMaxOffset``, ``haSlaveBehindBytes`` (master: the worst connected slave) or
  ``haMasterAddr``, ``haBehindMasterBytes``, ``haAheadOfMasterBytes`` (slave) — what ``brokerStatus`` and
  ``clusterList`` show.
"""

from __future__ import annotations

import asyncio
import json
import logging
import math
import os
from collections.abc import Awaitable, Callable
from typing import Any

from broker.config import BrokerConfig
from broker.ha.auth import HASecurity
from broker.ha.controller_api import ControllerApi, ControllerError, MasterView
from broker.ha.epoch_file import EpochFile
from broker.ha.master import HAConfig, HAMaster
from broker.ha.replicas import NO_ROLE, ReplicasConfig, ReplicasManager
from broker.ha.slave import HAClient, SlaveConfig
from broker.ha.sync import SlaveSynchronize
from broker.ha.sync_state import AckRule
from broker.services.consumer_offsets import ConsumerOffsetTable
from broker.services.schedule import ScheduleService
from broker.services.subscription_groups import SubscriptionGroupTable
from broker.services.topic_config import TopicConfigTable
from broker.store.message_store import MessageStore
from protocol.bodies import BodyDecodeError, HAClientRuntimeInfo, HAConnectionInfo, HARuntimeInfo, loads_lenient
from protocol.bodies.controller import EpochEntry, EpochEntryCache, SyncStateSet
from protocol.codes import RequestCode, ResponseCode
from protocol.command import RemotingCommand
from protocol.errors import RemotingError
from protocol.headers import RegisterBrokerResponseHeader
from protocol.headers.controller import NotifyBrokerRoleChangedRequestHeader
from protocol.remoting import HandlerRegistry, RemotingClient
from protocol.remoting.handler import DeferredReply, Handler, RequestContext, awaited
from runtime.tasks import stop_tasks

_log = logging.getLogger("rocketq.broker.ha")

# J's SERVICE_NOT_AVAILABLE remark is sent by the send handler; this is the store's reason, shown in logs and status
SLAVE_REFUSAL = "messages are put to the slave"
FENCE_REASON = "the name server lists a slave of this broker; waiting for its offset (a slave may hold more)"


def _slave_sync(
    client: RemotingClient,
    master_addr: Callable[[], str | None],
    own_addr: Callable[[], str],
    tables: tuple[TopicConfigTable, ConsumerOffsetTable, ScheduleService, SubscriptionGroupTable],
    slave: HAClient,
) -> SlaveSynchronize:
    """A slave's metadata copy from ``master_addr``, only while its HA client replicates."""
    return SlaveSynchronize(
        client, master_addr, own_addr, *tables, replicating=lambda: slave.state.state == "REPLICATING"
    )


# controller mode: J reports a controller-elected master as SYNC_MASTER; a broker with no role yet as NONE
_ROLE_NAMES = {"MASTER": "SYNC_MASTER", "SLAVE": "SLAVE", "NONE": "NONE"}


class HAService:
    def __init__(
        self,
        config: BrokerConfig,
        store: MessageStore,
        client: RemotingClient,
        topics: TopicConfigTable,
        offsets: ConsumerOffsetTable,
        schedule: ScheduleService,
        groups: SubscriptionGroupTable,
        own_addr: Callable[[], str],
        reregister: Callable[[], None],
        security: HASecurity | None = None,
    ) -> None:
        self.config = config
        self.store = store
        self._client = client
        ha = config.ha
        self.controller_mode = ha.enable_controller_mode
        self.is_slave = config.identity.broker_role == "SLAVE" and not self.controller_mode
        self.replicas: ReplicasManager | None = None
        # controller mode: called with the id to register under (0 = master) whenever the role changes
        self.register_as: Callable[[int], Awaitable[None]] | None = None
        self.master: HAMaster | None = None
        self.slave: HAClient | None = None
        self.sync: SlaveSynchronize | None = None
        if self.is_slave:
            self.slave = HAClient(
                store,
                SlaveConfig(
                    ha.ha_send_heartbeat_interval / 1000,
                    ha.ha_housekeeping_interval / 1000,
                    ha.ha_transfer_batch_size,
                    ha.ha_master_address or None,
                ),
                on_lost=reregister,
                security=security,
            )
            slave = self.slave
            self.sync = _slave_sync(
                client, lambda: slave.state.master_addr, own_addr, (topics, offsets, schedule, groups), slave
            )
        else:
            self.master = HAMaster(
                store,
                HAConfig(
                    ha.ha_send_heartbeat_interval / 1000,
                    ha.ha_housekeeping_interval / 1000,
                    ha.ha_transfer_batch_size,
                    ha.ha_slave_fallbehind_max,
                    ha.slave_timeout / 1000,
                    config.identity.broker_role == "SYNC_MASTER" or self.controller_mode,
                ),
                security=security,
            )
            self._take_back = SlaveSynchronize(client, lambda: None, own_addr, topics, offsets, schedule, groups)
            self.master.before_lift = self._tables_from_slaves
        self.ha_port = 0
        self._fence_task: asyncio.Task[None] | None = None
        if self.controller_mode:
            self._build_controller_mode(own_addr, topics, offsets, schedule, groups, reregister, security)

    def _build_controller_mode(
        self,
        own_addr: Callable[[], str],
        topics: TopicConfigTable,
        offsets: ConsumerOffsetTable,
        schedule: ScheduleService,
        groups: SubscriptionGroupTable,
        reregister: Callable[[], None],
        security: HASecurity | None,
    ) -> None:
        cfg, ha = self.config, self.config.ha
        assert self.master is not None
        slave = self.slave = HAClient(
            self.store,
            SlaveConfig(
                ha.ha_send_heartbeat_interval / 1000, ha.ha_housekeeping_interval / 1000, ha.ha_transfer_batch_size
            ),
            on_lost=reregister,
            security=security,
        )
        root = cfg.store.store_path_root_dir
        epochs = EpochFile(os.path.dirname(ha.store_path_epoch_file) if ha.store_path_epoch_file else root)
        if ha.store_path_epoch_file:
            epochs.path = ha.store_path_epoch_file
        epochs.load()
        ident = cfg.identity
        self.replicas = replicas = ReplicasManager(
            ReplicasConfig(
                ident.broker_cluster_name,
                ident.broker_name,
                [a.strip() for a in ha.controller_addr.split(";") if a.strip()],
                heartbeat_s=ha.broker_heartbeat_interval / 1000,
                heartbeat_timeout_s=ha.send_heartbeat_timeout_millis / 1000,
                lease_s=ha.controller_heart_beat_timeout_mills / 1000,
                sync_metadata_s=ha.sync_broker_metadata_period / 1000,
                check_sss_s=ha.check_sync_state_set_period / 1000,
                election_priority=ha.broker_election_priority,
                min_in_sync_replicas=ha.min_in_sync_replicas,
                identity_path=ha.store_path_broker_identity or os.path.join(root, "brokerIdentity"),
            ),
            AckRule(ha.in_sync_replicas, ha.all_ack_in_sync_state_set, ha.ha_max_time_slave_not_catchup / 1000),
            ControllerApi(self._client, ident.broker_cluster_name, ident.broker_name),
            self.store,
            self.master,
            slave,
            epochs,
            own_addr,
            self._role_changed,
        )
        self.sync = _slave_sync(
            self._client,
            lambda: slave.state.master_addr if replicas.role == "SLAVE" else None,
            own_addr,
            (topics, offsets, schedule, groups),
            slave,
        )

    async def _role_changed(self, register_id: int) -> None:
        if self.register_as is not None:
            await self.register_as(register_id)

    # -- lifecycle -------------------------------------------------------------------------------------------------

    def before_serving(self) -> None:
        """Before the remoting server accepts anything: a slave refuses puts; a master that may have slaves ahead
        of it refuses them until ``start`` has looked."""
        if self.replicas is not None:
            self.store.refuse_puts(NO_ROLE)
        elif self.is_slave:
            self.store.refuse_puts(SLAVE_REFUSAL)
        elif self.config.namesrv.addrs and not self.config.ha.ha_master_force_writable:
            assert self.master is not None
            self.master.fence(FENCE_REASON)

    async def start_listener(self) -> None:
        """A master binds its HA port (before registering, which advertises it)."""
        if self.master is not None:
            self.ha_port = await self.master.start(self.config.network.bind_address, self.config.ha_listen_port)

    def ha_addr(self) -> str:
        ident = self.config.identity
        port = self.ha_port if self.master is not None else self.config.ha_listen_port
        return f"{ident.broker_ip2 or ident.broker_ip1}:{port}"

    async def start(self) -> None:
        """After the first registration: a slave starts copying; a master decides its fence. In controller mode
        the replicas manager takes over (and registers with the name servers once it has a role)."""
        if self.replicas is not None:
            self.replicas.start()
            assert self.sync is not None
            self.sync.start()
        elif self.slave is not None:
            self.slave.start()
            assert self.sync is not None
            self.sync.start()
        elif self.master is not None and self.master.state.fenced is not None and await self.check_fence():
            self._fence_task = asyncio.get_running_loop().create_task(self._watch_fence(), name="ha-fence-watch")

    async def _watch_fence(self) -> None:
        """While fenced, look again every heartbeat interval: a listed slave that died drops out of the name server
        (channel expiry), and then there is nobody to wait for."""
        assert self.master is not None
        while self.master.state.fenced is not None:
            await asyncio.sleep(self.config.ha.ha_send_heartbeat_interval / 1000)
            if self.master.state.fenced is not None:
                await self.check_fence(at_start=False)

    async def _cluster_info(self, ns: str) -> dict[str, Any] | None:
        try:
            resp = await self._client.invoke(ns, RemotingCommand.request(RequestCode.GET_BROKER_CLUSTER_INFO), 3.0)
            doc = loads_lenient(resp.body) if resp.code == ResponseCode.SUCCESS and resp.body else {}
        except (RemotingError, BodyDecodeError) as exc:
            _log.warning("cluster info from %s failed: %s", ns, exc)
            return None
        return doc if isinstance(doc, dict) else {}

    async def _listed_slaves(self) -> tuple[bool, list[str]]:
        """(whether a name server answered, the remoting addresses they list under ids > 0 for this broker name);
        every name server is asked at once."""
        name = self.config.identity.broker_name
        docs = await asyncio.gather(*(self._cluster_info(ns) for ns in self.config.namesrv.addrs))
        addrs: list[str] = []
        for doc in docs:
            bd = ((doc or {}).get("brokerAddrTable") or {}).get(name) or {}
            for bid, addr in (bd.get("brokerAddrs") or {}).items():
                if int(bid) > 0 and addr not in addrs:
                    addrs.append(str(addr))
        return any(d is not None for d in docs), addrs

    async def _tables_from_slaves(self, ha_peer: str) -> None:
        """After copying the log back from the slave at ``ha_peer`` (its HA connection's address): take back its
        tables, from the listed slave on the same host (any listed slave when none matches)."""
        _answered, addrs = await self._listed_slaves()
        host = ha_peer.rpartition(":")[0]
        for addr in sorted(addrs, key=lambda a: a.rpartition(":")[0] != host):
            if await self._take_back.take_back(addr):
                return

    async def check_fence(self, *, at_start: bool = True) -> bool:
        """Lift a master's start-up fence when no name server lists a slave of this broker name; returns whether
        it stays (a slave is listed: the fence then lasts until a slave reports, see ``broker.ha.master``). At
        start, a name server that does not answer counts as "no slave"; later it keeps the fence."""
        assert self.master is not None
        name = self.config.identity.broker_name
        answered, addrs = await self._listed_slaves()
        if addrs or not (answered or at_start):
            if addrs:
                _log.warning(
                    "%d slave(s) of %s listed: taking no writes until they report their offsets", len(addrs), name
                )
                self.master.expect_slaves(len(addrs))
            return self.master.state.fenced is not None
        if answered:
            self.master.lift_fence("no slave listed", routine=True)  # a lone master: nothing worth a warning
        else:
            self.master.lift_fence("no name server answered; assuming no slave")
        return False

    async def stop(self) -> None:
        task, self._fence_task = self._fence_task, None
        await stop_tasks(task)
        if self.replicas is not None:
            await self.replicas.stop()
        if self.sync is not None:
            await self.sync.stop()
        if self.slave is not None:
            await self.slave.stop()
        if self.master is not None:
            await self.master.stop()

    def force_writable(self, force: bool) -> None:
        """``haMasterForceWritable`` set at run time (``mqadmin updateBrokerConfig``): a fenced master takes writes
        now, without waiting for (or copying back from) its slaves."""
        if force and self.master is not None:
            self.master.lift_fence("forced by an operator (haMasterForceWritable=true)")

    def on_register_reply(self, reply: RegisterBrokerResponseHeader) -> None:
        rep = self.replicas
        if rep is not None and (rep.role != "SLAVE" or (reply.master_addr or "") != rep.master_addr):
            return  # controller mode: a name server still naming the deposed master must not point us back at it
        if self.slave is not None:
            self.slave.set_master(reply.ha_server_addr, reply.master_addr)

    # -- views -----------------------------------------------------------------------------------------------------

    def status(self) -> HARuntimeInfo:
        info = self._status()
        if self.replicas is None:
            return info
        return info.model_copy(update={"controller": self.replicas.status()})

    def _status(self) -> HARuntimeInfo:
        end = self.store.commitlog.max_offset
        rep = self.replicas
        if self.master is not None and (rep is None or rep.role != "SLAVE"):
            st = self.master.state
            fallbehind = self.config.ha.ha_slave_fallbehind_max
            conns = [
                HAConnectionInfo(
                    addr=link.peer,
                    slave_ack_offset=link.ack_offset,
                    diff=max(0, end - link.ack_offset) if link.ack_offset >= 0 else end,
                    in_sync=link.ack_offset >= 0 and end - link.ack_offset < fallbehind,
                    transferred_bytes=link.transferred,
                    slave_broker_id=link.broker_id,
                )
                for link in st.links.values()
            ]
            return HARuntimeInfo(
                master=rep is None or rep.role == "MASTER",
                broker_role=self.config.identity.broker_role if rep is None else _ROLE_NAMES[rep.role],
                master_commit_log_max_offset=end,
                push2slave_max_offset=st.push2slave_max,
                in_sync_slave_nums=sum(1 for c in conns if c.in_sync),
                ha_connection_info=conns,
                fenced=st.fenced or "",
                caught_up_from_slave_bytes=st.caught_up_from_slave,
                diverged_slaves=dict(st.diverged_slaves),
                auth_refused=st.auth_refused,
                ha_server_addr=self.ha_addr(),
            )
        assert self.slave is not None
        sst = self.slave.state
        return HARuntimeInfo(
            master=False,
            broker_role="SLAVE",
            ha_client_runtime_info=HAClientRuntimeInfo(
                master_addr=sst.master_ha_addr or "",
                master_remoting_addr=sst.master_addr or "",
                max_offset=end,
                master_offset=sst.master_offset,
                behind_bytes=max(0, sst.master_offset - end),
                state=sst.state,
                ahead_of_master_bytes=sst.ahead_by,
                connects=sst.connects,
            ),
            metadata_syncs=self.sync.syncs if self.sync is not None else 0,
        )

    def runtime_entries(self) -> dict[str, str]:
        st = self.status()
        out = {"brokerRole": st.broker_role, "brokerActive": "true" if st.master else "false"}
        if st.master:
            behind = [c.diff for c in st.ha_connection_info]
            out["haState"] = "FENCED" if st.fenced else "SERVING"
            out["haSlaveCount"] = str(len(behind))
            out["haPush2SlaveMaxOffset"] = str(st.push2slave_max_offset)
            out["haSlaveBehindBytes"] = str(max(behind) if behind else -1)
            out["haServerAddr"] = st.ha_server_addr
        elif st.ha_client_runtime_info is not None:
            c = st.ha_client_runtime_info
            out["haState"] = c.state
            out["haMasterAddr"] = c.master_addr
            out["haBehindMasterBytes"] = str(c.behind_bytes)
            out["haAheadOfMasterBytes"] = str(c.ahead_of_master_bytes)
        if self.replicas is not None:
            r = self.replicas
            if r.role != "MASTER":
                out["brokerActive"] = "false"
            if r.role == "MASTER" and not r.writable:
                out["haState"] = "FENCED"
            out["controllerRole"] = r.role
            out["masterEpoch"] = str(r.master_epoch)
            out["brokerControllerId"] = str(r.broker_id)
            out["syncStateSet"] = ",".join(str(i) for i in sorted(r.tracker.members))
            out["syncStateSetEpoch"] = str(r.tracker.epoch)
        return out

    def register(self, registry: HandlerRegistry) -> None:
        registry.register_all({RequestCode.GET_BROKER_HA_STATUS: self._ha_status})
        if self.replicas is not None:
            registry.register_all(
                {
                    RequestCode.NOTIFY_BROKER_ROLE_CHANGED: self._notify_role,
                    RequestCode.GET_BROKER_EPOCH_CACHE: self._epoch_cache,
                }
            )
        if RequestCode.GET_BROKER_RUNTIME_INFO in registry:
            registry.wrap(RequestCode.GET_BROKER_RUNTIME_INFO, self._runtime_info)

    async def _ha_status(self, ctx: RequestContext, cmd: RemotingCommand) -> RemotingCommand:
        return cmd.make_response(body=self.status().encode())

    async def _notify_role(self, ctx: RequestContext, cmd: RemotingCommand) -> RemotingCommand:
        """NOTIFY_BROKER_ROLE_CHANGED from the controller (J ``AdminBrokerProcessor.notifyBrokerRoleChanged``)."""
        assert self.replicas is not None
        h = NotifyBrokerRoleChangedRequestHeader.from_ext_fields(cmd.ext_fields)
        try:
            sss = SyncStateSet.decode(cmd.body or b"")
        except BodyDecodeError:
            sss = SyncStateSet()
        if h.master_broker_id is not None and h.master_epoch is not None:
            view = MasterView(
                h.master_broker_id,
                h.master_address or "",
                h.master_epoch,
                frozenset(sss.sync_state_set),
                h.sync_state_set_epoch or sss.sync_state_set_epoch,
            )
            try:
                await self.replicas.apply(view, asked_at=-math.inf)  # grants no lease: the next check does
            except (ControllerError, RemotingError, OSError, ValueError) as exc:
                return cmd.make_response(ResponseCode.SYSTEM_ERROR, remark=f"role change failed: {exc}")
        return cmd.make_response()

    async def _epoch_cache(self, ctx: RequestContext, cmd: RemotingCommand) -> RemotingCommand:
        """GET_BROKER_EPOCH_CACHE (``mqadmin getBrokerEpoch``): this replica's epoch entries and log end."""
        assert self.replicas is not None
        r = self.replicas
        ident = self.config.identity
        body = EpochEntryCache(
            cluster_name=ident.broker_cluster_name,
            broker_name=ident.broker_name,
            broker_id=r.broker_id,
            epoch_list=[
                EpochEntry(epoch=e.epoch, start_offset=e.start_offset, end_offset=e.end_offset)
                for e in r.epochs.entries()
            ],
            max_offset=self.store.commitlog.max_offset,
        )
        return cmd.make_response(body=body.encode())

    def _runtime_info(self, inner: Handler) -> Handler:
        async def handle(ctx: RequestContext, cmd: RemotingCommand) -> RemotingCommand | DeferredReply | None:
            resp = await awaited(inner(ctx, cmd))
            if not isinstance(resp, RemotingCommand) or resp.code != ResponseCode.SUCCESS or not resp.body:
                return resp
            doc = json.loads(resp.body)
            doc.setdefault("table", {}).update(self.runtime_entries())
            resp.body = json.dumps(doc, separators=(",", ":")).encode()
            return resp

        return handle
