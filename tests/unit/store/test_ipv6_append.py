"""A single message from an IPv6 producer takes the record module's general encoder (``encode_message``, from
``Appender.append_one``): its properties, given as a dict or as text, are stored once as text and read back, with
the IPv6 born host."""

from __future__ import annotations

from pathlib import Path

import pytest
from _store_util import get_all, small_config

from broker.store import MessageStore
from broker.store.request import PutRequest

BORN6 = ("::1", 5000)


@pytest.mark.parametrize("properties", [{"TAGS": "a", "K": "v"}, "TAGS\x01a\x02K\x01v"])
async def test_an_ipv6_single_put_keeps_its_properties_and_host(
    tmp_path: Path, properties: str | dict[str, str]
) -> None:
    store = MessageStore.open(small_config(tmp_path))
    await store.start()
    try:
        req = PutRequest("T6", 0, 0, 0, 1, BORN6, b"x", properties)
        res = await store.put_message(req)
        assert res.ok
        (msg,) = get_all(store, "T6", 0)
        assert (msg.body, msg.properties, msg.born_host) == (b"x", {"TAGS": "a", "K": "v"}, BORN6)
    finally:
        await store.close()
