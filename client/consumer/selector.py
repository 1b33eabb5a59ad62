"""``MessageSelector``: what a consumer subscribes with — tags (``"TagA || TagB"``, ``"*"``) or a SQL92 expression
over message properties (J ``MessageSelector.byTag`` / ``bySql``), and the heartbeat SubscriptionData of each.

A SQL92 subscription is evaluated by the broker (which needs ``enablePropertyFilter=true``); the client does not
re-filter it. Tag subscriptions are re-checked on the client by tag string, as J does.
"""

from __future__ import annotations

from dataclasses import dataclass

from protocol.bodies import SubscriptionData

TAG = "TAG"
SQL92 = "SQL92"


def parse_tags(expression: str | None) -> frozenset[str]:
    if not expression or expression.strip() in ("", "*"):
        return frozenset()
    return frozenset(t.strip() for t in expression.split("||") if t.strip())


@dataclass(frozen=True, slots=True)
class MessageSelector:
    expression_type: str
    expression: str

    @classmethod
    def by_sql(cls, sql: str) -> MessageSelector:
        """Messages whose properties satisfy ``sql`` (e.g. ``"a BETWEEN 10 AND 14 AND TAGS = 'TagA'"``)."""
        if not sql or not sql.strip():
            raise ValueError("a SQL92 selector needs an expression")
        return cls(SQL92, sql)

    @classmethod
    def by_tag(cls, tags: str = "*") -> MessageSelector:
        return cls(TAG, tags.strip() or "*")

    @property
    def is_sql(self) -> bool:
        return self.expression_type == SQL92

    def subscription(self, topic: str, sub_version: int = 0) -> SubscriptionData:
        if self.is_sql:
            return SubscriptionData(
                topic=topic, sub_string=self.expression, sub_version=sub_version, expression_type=SQL92
            )
        return SubscriptionData.of_tags(topic, self.expression, parse_tags(self.expression), sub_version)


ALL = MessageSelector(TAG, "*")


def as_selector(expression: str | MessageSelector) -> MessageSelector:
    """A tag expression string or a selector, as a selector."""
    if isinstance(expression, MessageSelector):
        return expression
    return MessageSelector.by_tag(expression)
