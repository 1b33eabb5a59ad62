"""Subscription-group administration: UPDATE_AND_CREATE_SUBSCRIPTIONGROUP (200), its 5.x list form
UPDATE_AND_CREATE_SUBSCRIPTIONGROUP_LIST (225), DELETE_SUBSCRIPTIONGROUP (207), GET_ALL_SUBSCRIPTIONGROUP_CONFIG (201)
(J ``AdminBrokerProcessor``).

* create/update: body = SubscriptionGroupConfig JSON (``groupName``, ``consumeEnable``, ``retryQueueNums``,
  ``retryMaxTimes``, …; missing keys take J's defaults). Bad JSON, a missing or invalid ``groupName``, or a
  negative ``retryQueueNums``/``retryMaxTimes`` → SYSTEM_ERROR naming the problem. Persisted.
* create a list (225): body ``{"groupConfigList":[SubscriptionGroupConfig]}``, each checked as above, all applied
  or none.
* delete: header ``groupName`` (and ``removeOffset``: also drop the group's committed offsets). Unknown groups
  succeed (J).
* list: ``{"subscriptionGroupTable":{name:config},"dataVersion":{...}}``.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import structlog

from broker import topics as T
from broker.handlers._common import decode_header
from broker.services.consumer_offsets import ConsumerOffsetTable
from broker.services.subscription_groups import SubscriptionGroupConfig, SubscriptionGroupTable
from protocol.bodies import loads_lenient
from protocol.codes import RequestCode, ResponseCode
from protocol.command import RemotingCommand
from protocol.headers import DeleteSubscriptionGroupRequestHeader
from protocol.remoting.handler import Handler, HandlerError, RequestContext

_log = structlog.get_logger("rocketq.broker.admin")


def _body(body: bytes) -> Any:
    try:
        return loads_lenient(body)
    except (ValueError, UnicodeDecodeError) as exc:
        raise HandlerError(ResponseCode.SYSTEM_ERROR, f"bad SubscriptionGroupConfig body: {exc}") from None


def parse_group_config(body: bytes) -> SubscriptionGroupConfig:
    return group_config(_body(body))


def group_config(raw: Any) -> SubscriptionGroupConfig:
    """A SubscriptionGroupConfig JSON object, checked (HandlerError SYSTEM_ERROR naming the problem)."""
    if not isinstance(raw, dict):
        raise HandlerError(ResponseCode.SYSTEM_ERROR, "bad SubscriptionGroupConfig body: not a JSON object")
    name = raw.get("groupName")
    if not isinstance(name, str):
        raise HandlerError(ResponseCode.SYSTEM_ERROR, "SubscriptionGroupConfig.groupName is missing")
    bad = T.group_error(name)
    if bad is not None:
        raise HandlerError(ResponseCode.SYSTEM_ERROR, bad)
    try:
        cfg = SubscriptionGroupConfig.from_json(name, raw)
        cfg = dataclasses.replace(
            cfg,
            retry_queue_nums=int(cfg.retry_queue_nums),
            retry_max_times=int(cfg.retry_max_times),
            broker_id=int(cfg.broker_id),
            which_broker_when_consume_slowly=int(cfg.which_broker_when_consume_slowly),
        )
    except (TypeError, ValueError) as exc:
        raise HandlerError(ResponseCode.SYSTEM_ERROR, f"bad SubscriptionGroupConfig: {exc}") from None
    if cfg.retry_queue_nums < 0 or cfg.retry_max_times < 0:
        raise HandlerError(ResponseCode.SYSTEM_ERROR, "retryQueueNums and retryMaxTimes must not be negative")
    return cfg


class AdminGroupHandlers:
    def __init__(self, groups: SubscriptionGroupTable, offsets: ConsumerOffsetTable) -> None:
        self._groups = groups
        self._offsets = offsets

    def table(self) -> dict[int, Handler]:
        return {
            RequestCode.UPDATE_AND_CREATE_SUBSCRIPTIONGROUP: self.create_group,
            RequestCode.UPDATE_AND_CREATE_SUBSCRIPTIONGROUP_LIST: self.create_group_list,
            RequestCode.DELETE_SUBSCRIPTIONGROUP: self.delete_group,
            RequestCode.GET_ALL_SUBSCRIPTIONGROUP_CONFIG: self.all_groups,
        }

    async def create_group(self, ctx: RequestContext, cmd: RemotingCommand) -> RemotingCommand:
        cfg = parse_group_config(cmd.body)
        self._groups.put(cfg)
        _log.info("subscription group created or updated", group=cfg.group_name, peer=ctx.conn.peer)
        return cmd.make_response()

    async def create_group_list(self, ctx: RequestContext, cmd: RemotingCommand) -> RemotingCommand:
        raw = _body(cmd.body)
        items = raw.get("groupConfigList") if isinstance(raw, dict) else None
        if not isinstance(items, list):
            raise HandlerError(ResponseCode.SYSTEM_ERROR, "bad SubscriptionGroupList body: no groupConfigList")
        configs = [group_config(item) for item in items]  # all valid, or none applied
        for cfg in configs:
            self._groups.put(cfg)
        _log.info("subscription groups created or updated", groups=[c.group_name for c in configs], peer=ctx.conn.peer)
        return cmd.make_response()

    async def delete_group(self, ctx: RequestContext, cmd: RemotingCommand) -> RemotingCommand:
        h = decode_header(DeleteSubscriptionGroupRequestHeader, cmd)
        self._groups.delete(h.group_name)
        if h.remove_offset:
            self._offsets.remove_group(h.group_name)
        _log.info("subscription group deleted", group=h.group_name, remove_offset=h.remove_offset, peer=ctx.conn.peer)
        return cmd.make_response()

    async def all_groups(self, ctx: RequestContext, cmd: RemotingCommand) -> RemotingCommand:
        return cmd.make_response(body=self._groups.encode())
