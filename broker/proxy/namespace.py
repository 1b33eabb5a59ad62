"""Namespaces on the gRPC endpoint: a server interceptor that puts every topic and group of a request into the
client's namespace before the RPC runs, and splits them back on the way out, so 5.x clients with a ``namespace``
get the isolation the 4.x Java client gets by wrapping names itself.

| direction | what happens to every ``apache.rocketmq.v2.Resource`` in the message (any depth)                        |
|-----------|-----------------------------------------------------------------------------------------------------------|
| request   | namespace = its ``resource_namespace``, else the ``x-mq-namespace`` header; non-empty → ``name`` becomes  |
|           | ``ns%name`` (``%RETRY%ns%group`` for a retry name; system names unchanged: ``protocol.namespace.wrap``)   |
| response  | a name with a namespace is split: ``resource_namespace = ns``, ``name`` without it (J proxy             |
|           | ``GrpcConverter.buildResource``)                                                                        |

The split on the way out is what Apache RocketMQ 5's proxy does. The wrap on the way in is this project's choice
(docs: features reference §4): Apache's proxy reads ``x-mq-namespace`` into its context but uses names as sent, so
a namespaced 5.x client there shares names with everyone. Streams (ReceiveMessage, Telemetry) are rewritten message
by message. The ACL check and everything else in the RPCs see the wrapped names, as for a namespaced 4.x client.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import grpc
from google.protobuf.message import Message

from protocol.namespace import namespace_of, unwrap, wrap

RESOURCE = "apache.rocketmq.v2.Resource"
HEADER = "x-mq-namespace"


def _repeated(fd: Any) -> bool:
    """protobuf 5.26+ ``label`` (removed in 7) or ``is_repeated`` (its replacement)."""
    flag = getattr(fd, "is_repeated", None)
    return bool(flag) if flag is not None else bool(fd.label == fd.LABEL_REPEATED)


# message type → its fields that are or contain a Resource: (name, is a Resource, repeated); built once per type
_PLANS: dict[str, list[tuple[str, bool, bool]]] = {}


def _plan(desc: Any, visiting: frozenset[str] = frozenset()) -> list[tuple[str, bool, bool]]:
    plan = _PLANS.get(desc.full_name)
    if plan is not None:
        return plan
    plan = []
    for fd in desc.fields:
        mt = fd.message_type
        if mt is None or mt.GetOptions().map_entry or mt.full_name in visiting:
            continue
        if mt.full_name == RESOURCE:
            plan.append((fd.name, True, _repeated(fd)))
        elif _plan(mt, visiting | {desc.full_name}):
            plan.append((fd.name, False, _repeated(fd)))
    _PLANS[desc.full_name] = plan
    return plan


def _walk(msg: Message, fn: Callable[[Any], None]) -> None:
    """Call ``fn`` on every set Resource inside ``msg`` (maps are not visited; no API message has one there)."""
    for name, is_resource, repeated in _plan(msg.DESCRIPTOR):
        if repeated:
            items = getattr(msg, name)
        elif msg.HasField(name):
            items = (getattr(msg, name),)
        else:
            continue
        for item in items:
            if is_resource:
                fn(item)
            else:
                _walk(item, fn)


def wrap_request(msg: Message, header_ns: str) -> None:
    def into(r: Any) -> None:
        ns = r.resource_namespace or header_ns
        if ns and r.name:
            r.name = wrap(ns, r.name)

    _walk(msg, into)


def split_response(msg: Message) -> None:
    def split(r: Any) -> None:
        ns = namespace_of(r.name)
        if ns:
            r.resource_namespace = ns
            r.name = unwrap(r.name)

    _walk(msg, split)


def _header_ns(details: grpc.HandlerCallDetails) -> str:
    for key, value in details.invocation_metadata or ():
        if key == HEADER:
            return str(value)
    return ""


class NamespaceInterceptor(grpc.aio.ServerInterceptor):  # type: ignore[misc]
    async def intercept_service(
        self,
        continuation: Callable[[grpc.HandlerCallDetails], Awaitable[grpc.RpcMethodHandler]],
        details: grpc.HandlerCallDetails,
    ) -> grpc.RpcMethodHandler:
        handler = await continuation(details)
        if handler is None:
            return handler
        ns = _header_ns(details)
        kw = {"request_deserializer": handler.request_deserializer, "response_serializer": handler.response_serializer}
        if handler.unary_unary is not None:
            uu = handler.unary_unary

            async def unary_unary(request: Message, context: Any) -> Message:
                wrap_request(request, ns)
                response = await uu(request, context)
                split_response(response)
                return response

            return grpc.unary_unary_rpc_method_handler(unary_unary, **kw)
        if handler.unary_stream is not None:
            us = handler.unary_stream

            async def unary_stream(request: Message, context: Any) -> AsyncIterator[Message]:
                wrap_request(request, ns)
                async for response in us(request, context):
                    split_response(response)
                    yield response

            return grpc.unary_stream_rpc_method_handler(unary_stream, **kw)
        if handler.stream_stream is not None:
            ss = handler.stream_stream

            async def requests(it: AsyncIterator[Message]) -> AsyncIterator[Message]:
                async for request in it:
                    wrap_request(request, ns)
                    yield request

            async def stream_stream(it: AsyncIterator[Message], context: Any) -> AsyncIterator[Message]:
                async for response in ss(requests(it), context):
                    split_response(response)
                    yield response

            return grpc.stream_stream_rpc_method_handler(stream_stream, **kw)
        return handler
