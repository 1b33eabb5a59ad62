"""Namespaces: topic and group names prefixed with ``<namespace>%`` by the client (J ``NamespaceUtil``, 4.5+); the
broker and the name server only ever see the longer names.

| operation                                   | result                                                        |
|---------------------------------------------|---------------------------------------------------------------|
| ``wrap("ns", "TopicA")``                    | ``ns%TopicA``                                                 |
| ``wrap("ns", "%RETRY%GID")``                | ``%RETRY%ns%GID`` (the retry / DLQ prefix stays in front)     |
| ``wrap("ns", "ns%TopicA")``                 | ``ns%TopicA`` (never wrapped twice)                           |
| ``wrap("ns", system topic or group)``       | unchanged (``TBW102``, ``RMQ_SYS_*``, ``rmq_sys_*``, ``CID_RMQ_SYS_*`` …) |
| ``unwrap("ns%TopicA")``                     | ``TopicA``; ``%RETRY%ns%GID`` → ``%RETRY%GID``                |
| ``unwrap("ns%TopicA", "other")``            | unchanged (only the given namespace is stripped)              |
| ``namespace_of("%DLQ%ns%GID")``             | ``ns`` (``""`` when there is none)                            |

Any text before the first ``%`` (after a retry/DLQ prefix) counts as the namespace, as in J. ``%`` is legal in topic
and group names (``^[%|a-zA-Z0-9_-]+$``), which is what makes this work.
"""

from __future__ import annotations

from typing import Final

from protocol.rules import DLQ_PREFIX, RETRY_PREFIX, SYSTEM_GROUP_PREFIX, SYSTEM_TOPIC_PREFIX, SYSTEM_TOPIC_SET

SEPARATOR: Final = "%"


def is_system_resource(name: str) -> bool:
    """J ``isSystemResource``: a system topic (the static set or the ``rmq_sys_`` prefix) or a system group."""
    return name in SYSTEM_TOPIC_SET or name.startswith(SYSTEM_TOPIC_PREFIX) or name.startswith(SYSTEM_GROUP_PREFIX)


def _split_prefix(name: str) -> tuple[str, str]:
    """(``%RETRY%`` / ``%DLQ%`` / ``""``, the rest)."""
    for prefix in (RETRY_PREFIX, DLQ_PREFIX):
        if name.startswith(prefix):
            return prefix, name[len(prefix) :]
    return "", name


def wrap(namespace: str | None, name: str) -> str:
    """J ``wrapNamespace``: ``ns%name`` (``%RETRY%ns%group`` for a retry name); unchanged without a namespace, for a
    system resource or a name already in ``namespace``."""
    if not namespace or not name or is_system_resource(name):
        return name
    prefix, rest = _split_prefix(name)
    if rest.startswith(namespace + SEPARATOR):
        return name
    return f"{prefix}{namespace}{SEPARATOR}{rest}"


def wrap_retry(namespace: str | None, group: str) -> str:
    """J ``wrapNamespaceAndRetry``: ``%RETRY%ns%group``."""
    return RETRY_PREFIX + wrap(namespace, group)


def unwrap(name: str, namespace: str | None = None) -> str:
    """J ``withoutNamespace``: the name without its namespace. With ``namespace`` given, only that one is stripped
    (None or ``""``: whatever namespace the name has)."""
    if not name or is_system_resource(name):
        return name
    prefix, rest = _split_prefix(name)
    if namespace:
        if not rest.startswith(namespace + SEPARATOR):
            return name
        return prefix + rest[len(namespace) + 1 :]
    index = rest.find(SEPARATOR)
    return prefix + rest[index + 1 :] if index > 0 else name


def namespace_of(name: str) -> str:
    """J ``getNamespaceFromResource``: the namespace part of ``name``, ``""`` for none."""
    if not name or is_system_resource(name):
        return ""
    _prefix, rest = _split_prefix(name)
    index = rest.find(SEPARATOR)
    return rest[:index] if index > 0 else ""
