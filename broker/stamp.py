"""BrokerStamp: the properties RocketMQ 5's broker adds to every message it accepts from a producer (single sends,
replies, and sends through the gRPC endpoint; not the messages of a batch), as Apache RocketMQ 5.5.0 stores them:

| property     | value                  | who reads it                                                             |
|--------------|------------------------|--------------------------------------------------------------------------|
| CLUSTER      | ``brokerClusterName``  | request-reply responders build ``<cluster>_REPLY_TOPIC`` from it          |
| MSG_REGION   | ``regionId``           | consumers' trace records (SubBefore regionId)                             |
| TRACE_ON     | ``traceOn``            | consumers skip tracing messages with ``false``                            |

(J 5 ``AbstractSendMessageProcessor.buildMsgContext`` puts MSG_REGION and TRACE_ON, ``SendMessageProcessor`` CLUSTER;
each replaces a value the producer sent.) The common case — none of the three sent — appends one precomputed
string; otherwise the properties are parsed and the three replaced.
"""

from __future__ import annotations

from typing import Final

from protocol.message import PropertyKey, decode_properties, encode_properties

_MARKS: Final = tuple(k + "\x01" for k in (PropertyKey.CLUSTER, PropertyKey.MSG_REGION, PropertyKey.TRACE_ON))


class BrokerStamp:
    __slots__ = ("_suffix", "values")

    def __init__(self, cluster: str, region_id: str, trace_on: bool) -> None:
        self.values: dict[str, str] = {
            PropertyKey.CLUSTER: cluster,
            PropertyKey.MSG_REGION: region_id,
            PropertyKey.TRACE_ON: "true" if trace_on else "false",
        }
        self._suffix = encode_properties(self.values)

    def apply(self, props: str) -> str:
        """``props`` (a properties string) with the three set."""
        if not props:
            return self._suffix
        if _MARKS[0] in props or _MARKS[1] in props or _MARKS[2] in props:
            merged = decode_properties(props)
            merged.update(self.values)
            return encode_properties(merged)
        return f"{props}{self._suffix}" if props[-1] == "\x02" else f"{props}\x02{self._suffix}"

    def apply_dict(self, props: dict[str, str]) -> None:
        props.update(self.values)
