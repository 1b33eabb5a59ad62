"""Helpers of the Dashboard suite (tests marked ``dashboard``): what the fixtures in ``conftest.py`` start.

One cluster per module and backend: rocketq's name server and broker as real processes (``tests.servers``; the
broker's listenPort is chosen so that listenPort - 2, the fast port the Dashboard dials, is free), or Apache RocketMQ
5.5.0's (``tests.reference.peers``, without its proxy), traffic from the synchronous SDK (a
producer, a push consumer, a consumer that sends every message to its DLQ, a group that consumed and went offline),
the Dashboard jar (``scripts/dashboard.sh jar``, cached outside the checkout) started on a free port with its
default configuration, and Debian's Chromium driven by Playwright. Screenshots go to ``<dir>/<backend>/<page>.png``
where ``<dir>`` is ``$DASHBOARD_ARTIFACTS`` or ``tmp/artifacts/dashboard`` in the checkout (printed at the start).
"""

from __future__ import annotations

import os
import re
import threading
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.servers import REPO

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
BOOT_TIMEOUT_S = 300.0
BACKENDS = ("rocketq", "apache")
CLUSTER = "DashCluster"
TOPIC = "DashTopic"
GROUP = "DashGroup"
DLQ_TOPIC = "DashDlqTopic"
DLQ_GROUP = "DashDlqGroup"
LAG_GROUP = "DashLagGroup"
MESSAGES = 30


def dashboard_jar() -> Path | None:
    """The cached Dashboard jar (where ``scripts/dashboard.sh`` builds it), or None when not built yet."""
    tarball = Path(
        os.environ.get("DASHBOARD_TARBALL", REPO.parent / "shared/vendor/rocketmq-dashboard-770822bb.tar.gz")
    )
    commit = tarball.name.removesuffix(".tar.gz").rpartition("-")[2]
    cache = Path(os.environ.get("ROCKETQ_CACHE", Path.home() / ".cache" / "rocketq"))
    jar = cache / f"dashboard-{commit}" / "rocketmq-dashboard.jar"
    return jar if jar.is_file() else None


def missing() -> str | None:
    """Why the dashboard tests cannot run here, or None."""
    if not Path(CHROMIUM).is_file():
        return f"{CHROMIUM} not installed (make chromium)"
    try:
        import playwright  # noqa: F401
    except ImportError:
        return "playwright (PyPI) not installed (extra [test])"
    if dashboard_jar() is None:
        return "the RocketMQ Dashboard is not built (make dashboard-jar)"
    return None


@dataclass
class Traffic:
    """What the module's clients did: message keys sent, bodies the DLQ consumer saw (a body once per delivery)."""

    keys: list[str]
    dlq_seen: list[str] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)


@dataclass(frozen=True)
class Cluster:
    """A running cluster the Dashboard is pointed at: ``backend`` is "rocketq" or "apache" (Apache RocketMQ 5.5.0)."""

    backend: str
    ns_addr: str
    broker_addr: str


@dataclass
class Env:
    servers: Cluster
    url: str
    traffic: Traffic
    artifacts: Path


def http_ok(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=5) as r:
            return bool(r.status == 200)
    except OSError:
        return False


# the Dashboard's fetch helper (remoteApi._fetch): the CSRF cookie first, then the call with its token
_API_JS = """async ([path, body]) => {
  const cookie = () => document.cookie.replace(/(?:(?:^|.*;\\s*)XSRF-TOKEN\\s*\\=\\s*([^;]*).*$)|^.*$/, '$1');
  if (!cookie()) { await fetch('/rocketmq-dashboard/csrf-token', {credentials: 'include'}); }
  const init = {credentials: 'include', headers: {'Content-Type': 'application/json', 'X-XSRF-TOKEN': cookie()}};
  if (body !== null) { init.method = 'POST'; init.body = JSON.stringify(body); }
  const r = await fetch(path, init);
  const text = await r.text();
  try { return JSON.parse(text); } catch (e) { return {httpStatus: r.status, text: text}; }
}"""


def api(page: Any, path: str, body: Any = None) -> Any:
    """The Dashboard's HTTP API called from the page; its JSON answer (``{status, data, errMsg}`` for most)."""
    return page.evaluate(_API_JS, [path, body])


def ok(page: Any, path: str, body: Any = None) -> Any:
    doc = api(page, path, body)
    assert isinstance(doc, dict) and doc.get("status") == 0, f"{path}: {doc}"
    return doc["data"]


def open_page(
    page: Any,
    env: Env,
    route: str,
    name: str,
    *texts: str,
    tick: tuple[str, ...] = (),
    press: tuple[str, str] | None = None,
) -> None:
    """Open ``#/route``, tick the checkboxes labelled ``tick``, press the button ``press[1]`` once ``press[0]`` shows,
    wait until every one of ``texts`` is visible, save a full-page screenshot as ``name``."""
    page.goto("about:blank")  # a fresh load: no exit animation of the previous page in the picture or the match
    page.goto(f"{env.url}/#/{route}")
    for label in tick:
        page.locator(".ant-checkbox-wrapper", has_text=label).first.click()
    if press is not None:
        page.get_by_text(press[0], exact=True).first.wait_for(state="visible")
        page.get_by_role("button", name=press[1]).first.click()
    try:
        for text in texts:
            page.get_by_text(text, exact=False).first.wait_for(state="visible", timeout=60_000)
    finally:
        settle(page)
        page.screenshot(path=str(env.artifacts / f"{name}.png"), full_page=True)


def search_page(
    page: Any,
    env: Env,
    route: str,
    name: str,
    scope: str,
    pick: str,
    *texts: str,
    fill: str | None = None,
    since: float | None = None,
    tab: str | None = None,
) -> None:
    """Open ``#/route`` (and its tab ``tab``) and search as an operator does, inside the first ``scope`` element (a
    form, the active tab): pick ``pick`` in its first select (typed, then the option of exactly that text clicked),
    type ``fill`` into its first text input, set its Begin/End pickers to the last ``since`` seconds, press its first
    primary button; wait until a result row and every one of ``texts`` is visible, save a full-page screenshot as
    ``name``."""
    page.goto("about:blank")
    page.goto(f"{env.url}/#/{route}")
    form = page.locator(scope).first
    try:
        if tab is not None:
            page.locator(".ant-tabs-tab", has_text=tab).first.click()
            page.locator(".ant-tabs-tab-active", has_text=tab).wait_for(state="visible")
        form.locator(".ant-select").first.click()
        page.keyboard.type(pick)
        option = page.locator(".ant-select-item-option").filter(has_text=re.compile(f"^{re.escape(pick)}$"))
        option.first.click()
        if fill is not None:
            form.locator("input.ant-input").first.fill(fill)
        if since is not None:
            # the Begin and End pickers: the last ``since`` seconds (their initial values are both today 00:00)
            now = time.time()
            for i, when in enumerate((now - since, now + 60)):
                box = form.locator(".ant-picker input").nth(i)
                box.click()
                box.fill(time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(when)))
                box.press("Enter")
        form.locator("button.ant-btn-primary").first.click()
        page.locator("tr.ant-table-row").first.wait_for(state="visible", timeout=60_000)
        for text in texts:
            page.get_by_text(text, exact=False).first.wait_for(state="visible", timeout=60_000)
    finally:
        settle(page)
        page.screenshot(path=str(env.artifacts / f"{name}.png"), full_page=True)


def settle(page: Any) -> None:
    """Let the page's remaining requests finish before a screenshot, for the picture only: a page that keeps polling
    (or a slow machine) is not a failure, the texts waited for are the check."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    try:
        page.wait_for_load_state("networkidle", timeout=15_000)
    except PlaywrightTimeout:
        pass
