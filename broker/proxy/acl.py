"""ACL 1.0 on the RocketMQ 5 gRPC endpoint (RocketMQ 5 proxy ``AuthenticationInterceptor`` with
``PlainAccessValidator.parse`` for gRPC messages): which topic and group permissions each request needs, and the check
of one request against the broker's ``AclRules`` — the same rules object the remoting hook uses, so a reloaded
``plain_acl.yml`` applies to gRPC clients as well.

Request → resources (groups as ``%RETRY%<group>``, as remoting; topic and group names as sent, namespaces ignored
like the rest of this endpoint):

=================================== ===========================================================================
request                             needs
=================================== ===========================================================================
QueryRoute                          topic ANY (PUB or SUB)
SendMessage                         topic PUB (every message must name the same topic, else refused)
EndTransaction                      topic PUB
ReceiveMessage                      group SUB + topic SUB (``message_queue.topic``)
AckMessage, ChangeInvisibleDuration group SUB + topic SUB
ForwardMessageToDeadLetterQueue     group SUB + topic SUB
QueryAssignment                     group SUB + topic SUB
Heartbeat                           consumer client types: group SUB; producers: nothing
NotifyClientTermination             group SUB when a group is named
Telemetry ``settings``              publishing: each topic PUB; subscription: group SUB + each topic SUB;
                                    neither: refused. Other telemetry commands: nothing
stream open (Telemetry)             signature only
=================================== ===========================================================================

Check order (``AclRules.validate``): global whitelist → access key present → account known → account whitelist →
signature of ``x-mq-date-time`` (``auth``) → that date within [now − 15 min, now + 60 s] (replay protection,
beyond RocketMQ) → permissions. No gRPC request is admin-only. A refusal is an
``AclError``; the endpoint answers it as RocketMQ 5's ``ResponseBuilder`` answers an ``AclException``: gRPC OK with
``status.code`` UNAUTHORIZED (40100) and the reason as message.
"""

from __future__ import annotations

import hmac
from collections.abc import Callable, Mapping
from typing import Any

from broker.proxy import auth
from broker.proxy.pb import definition_pb2 as pb
from broker.proxy.pb import service_pb2 as spb
from runtime.acl.rules import ANY, PUB, RETRY_PREFIX, SUB, AclError, AclRules, host_of

GRPC_CODE = 0  # gRPC requests carry no remoting request code: none of them is admin-only

_CONSUMER_TYPES = frozenset({pb.ClientType.PUSH_CONSUMER, pb.ClientType.SIMPLE_CONSUMER, pb.ClientType.PULL_CONSUMER})


def _topic(out: dict[str, int], res: pb.Resource, perm: int) -> None:
    out[res.name] = perm


def _group(out: dict[str, int], res: pb.Resource) -> None:
    out[RETRY_PREFIX + res.name] = SUB


def required_resources(request: Any) -> dict[str, int]:
    """Resource → needed permission for one gRPC request message (the table above); AclError when the request
    cannot be authorised at all (mixed topics in one send, settings without publishing or subscription)."""
    out: dict[str, int] = {}
    if isinstance(request, spb.SendMessageRequest):
        topics = {m.topic.name for m in request.messages}
        if len(topics) > 1:
            raise AclError("SendMessageRequest, messages' topic is not consistent")
        for name in topics:
            out[name] = PUB
    elif isinstance(request, spb.ReceiveMessageRequest):
        _group(out, request.group)
        _topic(out, request.message_queue.topic, SUB)
    elif isinstance(
        request,
        spb.AckMessageRequest
        | spb.ChangeInvisibleDurationRequest
        | spb.ForwardMessageToDeadLetterQueueRequest
        | spb.QueryAssignmentRequest,
    ):
        _group(out, request.group)
        _topic(out, request.topic, SUB)
    elif isinstance(request, spb.EndTransactionRequest):
        _topic(out, request.topic, PUB)
    elif isinstance(request, spb.QueryRouteRequest):
        _topic(out, request.topic, ANY)
    elif isinstance(request, spb.HeartbeatRequest):
        if request.client_type in _CONSUMER_TYPES:
            _group(out, request.group)
    elif isinstance(request, spb.NotifyClientTerminationRequest):
        if request.group.name.strip():
            _group(out, request.group)
    elif isinstance(request, spb.TelemetryCommand) and request.HasField("settings"):
        s = request.settings
        if s.HasField("publishing"):
            for t in s.publishing.topics:
                _topic(out, t, PUB)
        elif s.HasField("subscription"):
            _group(out, s.subscription.group)
            for entry in s.subscription.subscriptions:
                _topic(out, entry.topic, SUB)
        else:
            raise AclError("settings command doesn't have pub or sub field")
    return out


def _fields(header: str) -> tuple[str, dict[str, str]]:
    method, _, rest = header.strip().partition(" ")
    fields: dict[str, str] = {}
    for part in rest.split(","):
        key, eq, value = part.strip().partition("=")
        if eq:
            fields[key.strip()] = value.strip()
    return method, fields


class GrpcAcl:
    """Checks gRPC requests against ``rules()`` — called per request, so hot reloads apply at once."""

    __slots__ = ("denied", "rules")

    def __init__(self, rules: Callable[[], AclRules]) -> None:
        self.rules = rules
        self.denied = 0

    def check(self, metadata: Mapping[str, str], peer: str, request: Any | None) -> None:
        """Raise AclError unless the caller at ``peer`` (``ip:port``) may send ``request`` (None: the opening of a
        stream, signature only) with these call ``metadata``."""
        header = metadata.get("authorization") or ""
        date_time = metadata.get("x-mq-date-time") or ""
        method, fields = _fields(header)
        access_key = fields.get("Credential", "").split("/", 1)[0] or None
        signature = fields.get("Signature", "").lower()

        def signature_ok(secret_key: str) -> bool:
            if method != auth.METHOD or not date_time or not signature:
                return False
            if not hmac.compare_digest(auth.sign(secret_key, date_time), signature):
                return False
            try:
                auth.check_fresh(date_time)  # a valid signature over a stale date: a replayed header
            except auth.AuthError as exc:
                raise AclError(str(exc)) from None
            return True

        try:
            self.rules().validate(
                host_of(peer),
                access_key,
                signature_ok,
                GRPC_CODE,
                lambda: required_resources(request) if request is not None else {},
            )
        except AclError:
            self.denied += 1
            raise
