"""The built wheel in a fresh venv in a temp dir, away from this checkout: ``mqnamesrv`` and ``mqbroker`` start
from its console scripts, ``mqadmin sendMessage`` stores a message, ``rocketq`` imports from a directory holding a
``client.py``, and mypy (``--python-executable`` the fresh venv) type-checks a tiny project that uses it.

Offline and quick (marker ``wheel``, ``make test-wheel``): the wheel is built without build isolation from this
venv's setuptools; the fresh venv gets no pip, and sees only the core dependencies' distributions (the closure of the
wheel's own ``Requires-Dist`` without extras, linked from this venv), so a module that needs an undeclared or
extra-only dependency fails here; ``pip check`` confirms the wheel's requirements are met by them.
"""

from __future__ import annotations

import functools
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from importlib import metadata
from pathlib import Path

import pytest
from packaging.requirements import Requirement

from tests.eventually import eventually_sync
from tests.servers import REPO, free_port, spare_port

pytestmark = [pytest.mark.wheel, pytest.mark.timeout(300)]

SOURCES = (
    "pyproject.toml",
    "setup.py",
    "README.md",
    "rocketq",
    "protocol",
    "runtime",
    "namesrv",
    "controller",
    "broker",
    "client",
    "spark_connector",
)


def _run(*args: str | Path, cwd: Path, timeout: float = 180, env: dict[str, str] | None = None) -> str:
    out = subprocess.run(
        [str(a) for a in args], cwd=cwd, capture_output=True, text=True, timeout=timeout,
        env=env or _clean_env(),
    )  # fmt: skip
    assert out.returncode == 0, f"{args}: {out.returncode}\n{out.stdout}\n{out.stderr}"
    return out.stdout


def _clean_env() -> dict[str, str]:
    """This process's environment without anything that would point Python at this checkout."""
    return {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "MYPYPATH", "VIRTUAL_ENV", "PYTHONHOME")}


def _build_wheel(tmp: Path) -> Path:
    src = tmp / "src"
    for name in SOURCES:
        if (REPO / name).is_dir():
            shutil.copytree(REPO / name, src / name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        else:
            src.mkdir(exist_ok=True)
            shutil.copy2(REPO / name, src / name)
    dist = tmp / "dist"
    _run(sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--no-build-isolation", "-w", dist, src, cwd=tmp)
    (wheel,) = dist.glob("rocketq-*.whl")
    return wheel


def _core_requirements(wheel: Path) -> list[Requirement]:
    with zipfile.ZipFile(wheel) as z:
        meta = next(n for n in z.namelist() if n.endswith(".dist-info/METADATA"))
        text = z.read(meta).decode()
    reqs = [
        Requirement(line.split(":", 1)[1].strip()) for line in text.splitlines() if line.startswith("Requires-Dist:")
    ]
    return [r for r in reqs if r.marker is None or r.marker.evaluate({"extra": ""})]


def _link_closure(reqs: list[Requirement], into: Path) -> list[str]:
    """Symlink every top-level file and directory of the distributions ``reqs`` need (recursively, extras
    excluded) from this venv into ``into``; returns the distribution names."""
    into.mkdir()
    seen: set[str] = set()
    todo = list(reqs)
    while todo:
        req = todo.pop()
        key = re.sub(r"[-_.]+", "-", req.name).lower()
        if key in seen:
            continue
        seen.add(key)
        dist = metadata.distribution(req.name)
        root = Path(str(dist.locate_file("")))
        for f in dist.files or ():
            top = f.parts[0]
            if top in ("..", "__pycache__") or (into / top).exists():
                continue
            (into / top).symlink_to(root / top)
        for spec in dist.requires or ():
            dep = Requirement(spec)
            if dep.marker is None or dep.marker.evaluate({"extra": ""}):
                todo.append(dep)
    return sorted(seen)


def _booted(p: subprocess.Popen[bytes], log: Path) -> bool:
    """Whether the daemon printed its "... boot success ..." line (it does once it serves); fails if it exited."""
    if b"boot success" in log.read_bytes():
        return True
    assert p.poll() is None, f"{p.args[0]} did not boot (exit {p.poll()}):\n{log.read_text()[-2000:]}"
    return False


def test_wheel_in_a_fresh_venv(tmp_path: Path) -> None:
    wheel = _build_wheel(tmp_path)
    with zipfile.ZipFile(wheel) as z:
        names = z.namelist()
    for pkg in ("rocketq", "protocol", "runtime", "namesrv", "controller", "broker", "client", "spark_connector"):
        assert f"{pkg}/__init__.py" in names, pkg
    assert {"rocketq/py.typed", "client/py.typed", "protocol/py.typed", "runtime/py.typed"} <= set(names)
    assert not any(n.startswith(("tests/", "bench/", "scripts/")) for n in names)

    venv = tmp_path / "venv"
    _run(getattr(sys, "_base_executable", sys.executable), "-m", "venv", "--without-pip", venv, cwd=tmp_path)
    py, bin_dir = venv / "bin" / "python", venv / "bin"
    site = Path(_run(py, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])", cwd=tmp_path).strip())
    dists = _link_closure(_core_requirements(wheel), tmp_path / "deps")
    assert "pydantic" in dists and not {"pytest", "grpcio", "pyspark", "mypy"} & set(dists)
    (site / "core-deps.pth").write_text(f"{tmp_path / 'deps'}\n")
    _run(
        sys.executable,
        "-m",
        "pip",
        "--python",
        py,
        "install",
        "--quiet",
        "--no-deps",
        "--no-index",
        wheel,
        cwd=tmp_path,
    )
    assert "No broken requirements found" in _run(sys.executable, "-m", "pip", "--python", py, "check", cwd=tmp_path)

    # the servers from the console scripts, configured with files in the temp dir, run from it
    work = tmp_path / "work"
    work.mkdir()
    ns_port = free_port()
    port = spare_port(ns_port)
    ha = spare_port(port)
    (work / "namesrv.conf").write_text(
        f"listenAddress=127.0.0.1\nlistenPort={ns_port}\nkvConfigPath={work}/ns/kv.json\n"
        f"configStorePath={work}/ns/namesrv.properties\nlogDir={work}/logs/namesrv\n"
    )
    (work / "broker.conf").write_text(
        f"bindAddress=127.0.0.1\nbrokerIP1=127.0.0.1\nlistenPort={port}\nhaListenPort={ha}\n"
        f"storePathRootDir={work}/store\nlogDir={work}/logs/broker\nautoCreateTopicEnable=true\n"
    )
    procs: list[tuple[subprocess.Popen[bytes], Path]] = []
    try:
        for name, argv in (
            ("namesrv", [bin_dir / "mqnamesrv", "-c", work / "namesrv.conf"]),
            ("broker", [bin_dir / "mqbroker", "-n", f"127.0.0.1:{ns_port}", "-c", work / "broker.conf"]),
        ):
            log = work / f"{name}.out"
            with log.open("wb") as out:  # a file, not a pipe: nobody has to keep draining it
                p = subprocess.Popen([str(a) for a in argv], cwd=work, env=_clean_env(), stdout=out, stderr=out)
            procs.append((p, log))
            eventually_sync(functools.partial(_booted, p, log), timeout=60, what=f"{p.args[0]} to boot (output: {log})")
        out = _run(
            bin_dir / "mqadmin", "sendMessage", "-n", f"127.0.0.1:{ns_port}", "-t", "WheelT", "-p", "hi", cwd=work
        )
        assert "SEND_OK" in out, out
    finally:
        for p, _log in reversed(procs):
            p.terminate()
        for p, log in reversed(procs):
            assert p.wait(30) == 0, log.read_text()[-2000:]

    # the SDK from another project: imported from site-packages even beside a client.py, and typed for mypy
    proj = tmp_path / "project"
    proj.mkdir()
    (proj / "client.py").write_text('raise SystemExit("the project\'s client.py was imported")\n')
    where = _run(py, "-c", "import rocketq, client; print(rocketq.__file__, client.__file__)", cwd=proj).split()
    assert [Path(w) for w in where] == [site / "rocketq" / "__init__.py", site / "client" / "__init__.py"]
    (proj / "client.py").unlink()
    (proj / "app.py").write_text(
        "from rocketq import Message, Producer, SendResult\n\n\n"
        "async def main() -> SendResult:\n"
        '    async with Producer("g", "127.0.0.1:9876", send_timeout_ms="3s") as p:\n'
        '        return await p.send(Message("T", b"x"))\n'
    )
    out = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--no-incremental", "--python-executable", str(py), "app.py"],
        cwd=proj, env=_clean_env(), capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert 'Argument "send_timeout_ms" to "Producer" has incompatible type "str"; expected "int"' in out.stdout, (
        out.stdout + out.stderr
    )
    assert out.stdout.count("error:") == 1, out.stdout
    assert sysconfig.get_paths()["purelib"] != str(site)  # (the fresh venv is not this one)
