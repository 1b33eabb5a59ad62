"""Tag subscriptions: parsing ``"TagA || TagB"`` expressions and the two-stage filter the pull path uses.

J builds ``SubscriptionData`` with ``FilterAPI.buildSubscriptionData`` (split on ``||``, trim, drop empties;
``""``/``"*"`` = every tag) and filters at the consume-queue level by ``codeSet`` (tag hash codes). The C++ client
sends ``codeSet: [0,0]`` (docs/reference/protocol.md trap 6), so the codes are always recomputed here from the tag strings and the
client's codeSet is ignored. Stage 1 (``match_code``) compares a consume-queue unit's tag hash with the wanted
hashes; stage 2 (``match_tags``) checks the record's TAGS string exactly, to drop hash collisions.
"""

from __future__ import annotations

from broker.services.client_registry import SubscriptionData
from protocol.message import tag_hash

SUB_ALL = "*"


class SubscriptionParseError(ValueError):
    """An expression that cannot be used (J: SUBSCRIPTION_PARSE_FAILED)."""


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


def build_subscription(
    topic: str, expr: str | None, sub_version: int = 0, expression_type: str = "TAG"
) -> SubscriptionData:
    if expression_type and expression_type.upper() != "TAG":
        raise SubscriptionParseError(f"expression type {expression_type} is not supported, only TAG")
    tags = parse_tags(expr)
    sub_string = SUB_ALL if not tags else (expr or "").strip()
    return SubscriptionData(topic, sub_string, tags, frozenset(tag_hash(t) for t in tags), sub_version, "TAG")


class TagFilter:
    """Both stages for one subscription with at least one tag."""

    __slots__ = ("codes", "tags")

    def __init__(self, tags: frozenset[str], codes: frozenset[int]) -> None:
        self.tags = tags
        self.codes = codes

    def match_code(self, tags_code: int) -> bool:
        return tags_code in self.codes

    def match_tags(self, tags: str | None) -> bool:
        return tags is not None and tags in self.tags


def make_filter(sub: SubscriptionData) -> TagFilter | None:
    """None when the subscription takes every message (no filtering at all)."""
    if sub.matches_all:
        return None
    return TagFilter(sub.tags, sub.codes)
