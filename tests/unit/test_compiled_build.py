"""The two builds of one source (protocol/build.py, setup.py, pyproject.toml's [tool.rocketq.compile]): the module
list names real, compilable modules; ROCKETQ_PURE=1 imports the sources; a compiled build, where present, is what a
plain import loads; a compiled module older than its source is never run."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from protocol import build
from tests.servers import REPO

COMPILED = list(tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["rocketq"]["compile"]["modules"])

_PROBE = """
import importlib, json, sys
from protocol import build
names = sys.argv[1:]
files = {n: importlib.import_module(n).__file__ for n in names}
print(json.dumps({"files": files, "describe": build.describe(), "compiled": build.compiled_modules()}))
"""


def _probe(env: dict[str, str]) -> dict[str, object]:
    import json

    out = subprocess.run(
        [sys.executable, "-c", _PROBE, *COMPILED], cwd=REPO, env=env, capture_output=True, text=True, timeout=60
    )
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert isinstance(data, dict)
    return data


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != build.PURE_ENV}
    return {**env, "PYTHONPATH": str(REPO), **extra}


def test_compile_list_names_existing_modules_with_a_reason() -> None:
    table = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["rocketq"]["compile"]["modules"]
    assert len(table) >= 10
    for name, why in table.items():
        assert (REPO / Path(*name.split("."))).with_suffix(".py").is_file(), name
        assert why.strip(), f"{name}: no reason given"
        # the build chooser and package __init__ modules stay interpreted: they run before the choice is made
        assert name != "protocol.build" and not name.endswith("__init__"), name


def test_pure_env_imports_every_module_from_source() -> None:
    data = _probe(_env(ROCKETQ_PURE="1"))
    files = data["files"]
    assert isinstance(files, dict)
    assert all(str(f).endswith(".py") for f in files.values()), files
    assert data["compiled"] == []
    assert data["describe"] == "pure Python (ROCKETQ_PURE)"


def test_a_present_compiled_build_is_what_a_plain_import_loads() -> None:
    if importlib.util.find_spec(build.SHARED_LIB) is None:
        pytest.skip("no compiled build in this checkout (make compile)")
    if build.stale(REPO) is not None:
        pytest.skip("the compiled build is older than its sources (make compile)")
    data = _probe(_env())
    files = data["files"]
    assert isinstance(files, dict)
    assert all(str(f).endswith(".so") for f in files.values()), files
    assert data["compiled"] == sorted(COMPILED)
    assert str(data["describe"]).startswith("mypyc-compiled")


def test_a_compiled_module_older_than_its_source_is_stale(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("")
    pkg = tmp_path / "protocol"
    pkg.mkdir()
    lib = tmp_path / f"{build.SHARED_LIB}.cpython-311-x86_64-linux-gnu.so"
    ext = pkg / "frame.cpython-311-x86_64-linux-gnu.so"
    src = pkg / "frame.py"
    (pkg / "other.py").write_text("")  # not compiled: never stale
    src.write_text("")
    ext.write_bytes(b"")
    lib.write_bytes(b"")
    os.utime(src, (1_000, 1_000))
    os.utime(ext, (500, 500))  # a module's own extension may be older than the build (unchanged since the last)
    os.utime(lib, (2_000, 2_000))
    assert build.stale(tmp_path) is None
    os.utime(src, (3_000, 3_000))
    assert build.stale(tmp_path) == "protocol/frame.py"
    (tmp_path / "pyproject.toml").unlink()  # an installed wheel: no checkout, never stale
    assert build.stale(tmp_path) is None
