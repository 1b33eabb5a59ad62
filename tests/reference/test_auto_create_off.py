"""Apache RocketMQ 5.5.0 and rocketq both started with ``autoCreateTopicEnable=false`` (a second pair of clusters,
for this module only, without a proxy), and the Java 4.x client: a send to a topic nobody created, a send to a made
topic, and sends once the broker itself is made read-only (``brokerPermission=4``, the module's last scenario)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.eventually import eventually_sync
from tests.reference.compare import assert_same, errors, sent_view
from tests.reference.conftest import Target, cluster_pair
from tests.reference.peers import Driver
from tests.reference.test_java4_client import create, on_both

pytestmark = [pytest.mark.reference, pytest.mark.timeout(600)]

NO_AUTO_CREATE = "autoCreateTopicEnable=false\n"


@pytest.fixture(scope="module")
def strict(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Target]]:
    with cluster_pair(tmp_path_factory.mktemp("no-auto-create"), NO_AUTO_CREATE, NO_AUTO_CREATE) as pair:
        yield pair


def failures(events: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    return [(e["type"], e.get("code")) for e in errors(events)]


def test_send_to_unknown_topic_is_refused(java4: Driver, strict: dict[str, Target]) -> None:
    """No route for the topic and no default topic to create it from: the client's error, on both."""

    def run(t: Target) -> Any:
        refused = java4.run(cmd="send", ns=t.ns_addr, topic="RefNeverCreated", group="RefP")
        route = java4.run(cmd="route", ns=t.ns_addr, topic="RefNeverCreated")
        return {"send": failures(refused), "route": failures(route), "sent": sent_view(refused)}

    seen = on_both(strict, run)
    assert seen["apache"]["send"] and not seen["apache"]["sent"]
    assert_same(seen)


def test_made_topic_takes_sends(java4: Driver, strict: dict[str, Target]) -> None:
    def run(t: Target) -> Any:
        create(java4, t, "RefMadeTopic")
        sent = java4.run(cmd="send", ns=t.ns_addr, topic="RefMadeTopic", group="RefP", count=2)
        return {"sent": sent_view(sent), "errors": failures(sent)}

    seen = on_both(strict, run)
    assert seen["apache"] == {"sent": [("SEND_OK", True, True)] * 2, "errors": []}
    assert_same(seen)


def test_read_only_broker_refuses_sends(java4: Driver, strict: dict[str, Target]) -> None:
    """brokerPermission=4 at runtime (J UPDATE_BROKER_CONFIG): the route turns read-only and sends are refused.
    The module's last scenario: the brokers stay read-only."""

    def run(t: Target) -> Any:
        create(java4, t, "RefBrokerRO")
        assert java4.run(cmd="broker_config", ns=t.ns_addr, key="brokerPermission", value="4") == [{"event": "updated"}]
        route = eventually_sync(  # the broker registers its new permission with the name server
            lambda: (r := java4.run(cmd="route", ns=t.ns_addr, topic="RefBrokerRO"))[0].get("perm") == 4 and r,
            timeout=30,
            what="the route of RefBrokerRO read-only (perm 4)",
        )
        refused = java4.run(cmd="send", ns=t.ns_addr, topic="RefBrokerRO", group="RefP")
        return {"send": failures(refused), "route": route}

    seen = on_both(strict, run)
    assert seen["apache"]["send"]
    assert_same(seen)
