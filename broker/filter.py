"""Subscriptions and the message filter both front ends hand to the store: TAG expressions and SQL92 selectors.

TAG (``"TagA || TagB"``): J builds ``SubscriptionData`` with ``FilterAPI.buildSubscriptionData`` (split on ``||``,
trim, drop empties; ``""``/``"*"`` = every tag) and filters at the consume-queue level by ``codeSet`` (tag hash
codes). The C++ client sends ``codeSet: [0,0]`` (docs/reference/protocol.md trap 6), so the codes are always
recomputed here from the tag strings and the client's codeSet is ignored. Stage 1 (``match_code``) compares a
consume-queue unit's tag hash with the wanted hashes; stage 2 (``match_tags``) checks the record's TAGS string
exactly, to drop hash collisions.

SQL92 (``MessageSelector.bySql``): the expression is compiled once (``broker.sql92``, cached by text) when the
subscription is built, and evaluated per record over the properties it names, read from the record's raw
properties bytes (``match_record``, ``broker.sql92.record``; ``TAGS``, ``KEYS`` … are properties too). When every
way the expression can be TRUE needs a TAGS value from a known set (``TAGS = 'a'``, ``TAGS IN (...)`` under AND/OR),
the consume queue's tag hash is the first stage (``match_code``), so other tags' records are not even read. Like
J's ``enableCalcFilterBitMap`` (a bloom bitmap per consume-queue entry computed at dispatch), a SQL92 filter hands
the store a ``MarkSpec`` (``marks``: the expression and the same test over a message's properties): once a read has
used it, dispatch judges the topic's new messages with it and the store keeps the exact verdict per entry, so a
pull of judged messages skips the misses unread and serves the matches without evaluating them
(``broker.store.filter_marks``). Expression types as J's ``ExpressionType``: None, ``""`` and ``"TAG"`` are TAG;
``"SQL92"``; anything else does not parse.
"""

from __future__ import annotations

from collections.abc import Callable

from broker.services.client_registry import CompiledSubscription
from broker.sql92 import Selector, SelectorError, compile_selector
from broker.sql92.record import properties_matcher, record_matcher
from broker.store.request import MarkSpec, MessageFilter
from protocol.message_properties import tag_hash

SUB_ALL = "*"
TAG = "TAG"
SQL92 = "SQL92"


class SubscriptionParseError(ValueError):
    """An expression that cannot be used (J: SUBSCRIPTION_PARSE_FAILED)."""


def is_tag_type(expression_type: str | None) -> bool:
    return not expression_type or expression_type == TAG


def parse_tags(expr: str | None) -> frozenset[str]:
    """The tag set of an expression; empty means every tag."""
    if expr is None:
        return frozenset()
    expr = expr.strip()
    if not expr or expr == SUB_ALL:
        return frozenset()
    tags = frozenset(t.strip() for t in expr.split("||") if t.strip())
    if not tags:
        raise SubscriptionParseError(f"subString {expr!r} has no tag")
    return tags


def compile_sql(expr: str | None) -> Selector:
    """The compiled selector of a SQL92 expression; ``SubscriptionParseError`` with J's message when it does not
    compile (CHECK_CLIENT_CONFIG's remark)."""
    if not expr:
        raise SubscriptionParseError(f"Expression can't be null! {SQL92}")
    try:
        return compile_selector(expr)
    except SelectorError as exc:
        raise SubscriptionParseError(str(exc)) from None


def build_subscription(
    topic: str, expr: str | None, sub_version: int = 0, expression_type: str | None = TAG
) -> CompiledSubscription:
    """A subscription with its filter built, once per subscription: the consume service caches it, the client
    registry keeps it per heartbeat, and every read goes through its ``filter`` (``SubscriptionParseError`` when it
    does not parse)."""
    if is_tag_type(expression_type):
        tags = parse_tags(expr)
        sub_string = SUB_ALL if not tags else (expr or "").strip()
        codes = frozenset(tag_hash(t) for t in tags)
        tag_filter = MessageFilter(codes.__contains__, _tag_match(tags), None) if tags else None
        return CompiledSubscription(topic, sub_string, tags, codes, sub_version, TAG, filter=tag_filter)
    if expression_type != SQL92:
        raise SubscriptionParseError(f"expression type {expression_type} is not supported (TAG or SQL92)")
    selector = compile_sql(expr)
    return CompiledSubscription(
        topic, expr or "", sub_version=sub_version, expression_type=SQL92, selector=selector,
        filter=sql_filter(selector),
    )  # fmt: skip


def _tag_match(tags: frozenset[str]) -> Callable[[str | None], bool]:
    return lambda tag: tag is not None and tag in tags


def sql_filter(selector: Selector) -> MessageFilter:
    """The filter of a compiled selector."""
    tags = selector.required_tags  # e.g. "TAGS IN ('a', 'b') AND x > 1": no other tag's unit is read
    codes = None if tags is None else frozenset(tag_hash(t) for t in tags).__contains__
    marks = MarkSpec(f"{SQL92}:{selector.text}", properties_matcher(selector))
    return MessageFilter(codes, None, record_matcher(selector), marks)


def unparsed_subscription(topic: str, sub_string: str | None, expression_type: str | None) -> CompiledSubscription:
    """A heartbeat's subscription whose expression did not parse: kept (J keeps it, without its filter data), a
    SQL92 one reads nothing (the PULL handler refuses it before reading), a TAG one every message."""
    if expression_type == SQL92:
        return CompiledSubscription(topic, sub_string or SUB_ALL, expression_type=SQL92, filter=_READS_NOTHING)
    return CompiledSubscription(topic, sub_string or SUB_ALL)


_READS_NOTHING = MessageFilter(None, None, lambda view: False)
