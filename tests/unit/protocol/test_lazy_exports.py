"""``protocol.bodies`` and ``client`` load each public name's module on first use: every exported name is still
there (``from package import Name`` and ``import *``), it is the defining module's object, and a fresh process that
imports one name does not build the others' modules."""

from __future__ import annotations

import importlib
import json
import subprocess
import sys

import pytest


@pytest.mark.parametrize("package", ["protocol.bodies", "client"])
def test_every_exported_name_resolves_to_its_module_object(package: str) -> None:
    pkg = importlib.import_module(package)
    for name in pkg.__all__:
        value = getattr(pkg, name)
        homes = [m for m in list(sys.modules) if m.startswith(f"{package}.") or m == "protocol.rules"]
        assert any(getattr(sys.modules[m], name, None) is value for m in homes), name
    assert set(pkg.__all__) <= set(dir(pkg))
    with pytest.raises(AttributeError, match="no attribute 'NoSuchName'"):
        _ = pkg.NoSuchName


def test_star_import_gives_every_name() -> None:
    ns: dict[str, object] = {}
    exec("from protocol.bodies import *", ns)
    import protocol.bodies

    assert set(protocol.bodies.__all__) <= set(ns)


def _loaded_after(code: str) -> list[str]:
    out = subprocess.run(
        [sys.executable, "-c", f"import json, sys\n{code}\nprint(json.dumps(sorted(sys.modules)))"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    return list(json.loads(out))


def test_a_route_reader_does_not_build_the_admin_bodies() -> None:
    loaded = _loaded_after("from protocol.bodies import TopicRouteData")
    assert "protocol.bodies.routes" in loaded
    assert not {"protocol.bodies.admin", "protocol.bodies.registration", "protocol.bodies.ha"} & set(loaded)


def test_a_pull_consumer_does_not_load_the_push_consumer_or_the_producer() -> None:
    loaded = _loaded_after("from client import PullConsumer")
    assert "client.consumer.pull" in loaded
    assert not {"client.consumer.push", "client.producer.producer"} & set(loaded)
