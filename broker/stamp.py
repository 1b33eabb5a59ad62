"""BrokerStamp: the properties RocketMQ 5's broker adds to every message it accepts from a producer (single sends
and sends through the gRPC endpoint; not the messages of a batch; replies get MSG_REGION and TRACE_ON only), as
Apache RocketMQ 5.5.0 stores and pushes them:

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

from protocol.message_properties import PropertyKey, decode_properties, encode_properties


class BrokerStamp:
    __slots__ = ("_marks", "_suffix", "values")

    def __init__(self, cluster: str | None, region_id: str, trace_on: bool) -> None:
        """``cluster`` None: no CLUSTER (J's ReplyMessageProcessor adds none)."""
        self.values: dict[str, str] = {PropertyKey.CLUSTER: cluster} if cluster is not None else {}
        self.values[PropertyKey.MSG_REGION] = region_id
        self.values[PropertyKey.TRACE_ON] = "true" if trace_on else "false"
        self._suffix = encode_properties(self.values)
        marks = [k + "\x01" for k in self.values]
        self._marks = (marks[0], marks[1], marks[-1])  # three, so ``apply`` tests them without a loop

    def apply(self, props: str) -> str:
        """``props`` (a properties string) with the stamp's properties set."""
        if not props:
            return self._suffix
        a, b, c = self._marks
        if a in props or b in props or c in props:
            merged = decode_properties(props)
            merged.update(self.values)
            return encode_properties(merged)
        return f"{props}{self._suffix}" if props[-1] == "\x02" else f"{props}\x02{self._suffix}"

    def apply_dict(self, props: dict[str, str]) -> None:
        props.update(self.values)
