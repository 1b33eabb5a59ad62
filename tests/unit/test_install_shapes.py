"""Install shapes: the core install carries only what the name server, the broker and the SDK import; everything
else is an extra; ``make run`` installs the core and [grpc] only, ``make dist`` builds the wheel. (The wheel itself
is installed and run in ``tests/integration/test_wheel_install.py``.)"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def _names(reqs: list[str]) -> set[str]:
    return {re.split(r"[<>=!~;\[ ]", r, maxsplit=1)[0].lower() for r in reqs}


def test_core_dependencies_are_only_what_running_needs() -> None:
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    core = _names(project["dependencies"])
    assert core == {
        "uvloop",
        "msgpack",
        "pydantic",
        "structlog",
        "javaproperties",
        "prometheus_client",
        "pyyaml",
        "zlib-ng",
        "lark",  # the broker's SQL92 selector parser (broker/sql92)
        "pysyncobj",  # the controllers' Raft log (controller/raft_log)
    }
    extras = project["optional-dependencies"]
    assert set(extras) == {"grpc", "spark", "bench", "test", "dev"}
    assert _names(extras["grpc"]) == {"grpcio", "protobuf"}
    assert (
        "pyspark" in _names(extras["spark"]) and "pytest" in _names(extras["test"]) and "mypy" in _names(extras["dev"])
    )


def test_make_run_installs_grpc_only_and_make_dist_builds_a_wheel() -> None:
    makefile = (REPO / "Makefile").read_text()
    run_venv = makefile[makefile.index("$(RUN_STAMP): pyproject.toml") :].split("\n\n", 1)[0]
    assert "-e '.[grpc]'" in run_venv and "test" not in re.findall(r"-e '\.\[([^]]*)\]'", run_venv)[0]
    assert re.search(r"^run: run-venv compile$", makefile, re.M)  # make run uses the mypyc-compiled build
    assert "$(ARGS)" in makefile[makefile.index("\nrun: run-venv") :].split("\n\n", 1)[0]
    dist = makefile[makefile.index("\ndist:") :].split("\n\n", 1)[0]
    assert "pip wheel" in dist and "-w dist" in dist
