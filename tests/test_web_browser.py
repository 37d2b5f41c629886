"""roost web in a real browser (Debian's headless Chromium driven by selenium): the fleet page
sees a status change live and notifies; an agent's page sends with its receipt and answers a
dialog; the terminal echoes what is typed. Each test saves its page's screenshot in docs/img/
(the README shows them)."""

from __future__ import annotations

import json
import os
from typing import Any

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

from conftest import Env
from web_server import REPO, XTERM, chromium, running

pytestmark = pytest.mark.tmux
IMG = REPO / "docs" / "img"
# A recorder in place of the Notification API, the permission granted: what the page notifies.
RECORD_NOTIFICATIONS = """
window.notified = [];
window.Notification = class { constructor(title, opts) { window.notified.push(title); } };
window.Notification.permission = "granted";
"""


def spawn(world: Env, name: str) -> None:
    world.roost("spawn", name, "--cwd", str(world.tmp / "work"))


def wait(driver: Any, predicate: Any, timeout: float = 20) -> Any:
    return WebDriverWait(driver, timeout, poll_frequency=0.05).until(lambda d: predicate(d))


def badge_of(driver: Any, name: str) -> str:
    """The agent's badge on the fleet page now (read in one script: the page redraws itself)."""
    return str(
        driver.execute_script(
            "for (const li of document.querySelectorAll('ul.fleet li')) {"
            " if (li.querySelector('a').textContent === arguments[0])"
            "  return li.querySelector('[data-badge]').textContent; } return '';",
            name,
        )
    )


def headings(driver: Any) -> list[str]:
    return list(
        driver.execute_script(
            "return [...document.querySelectorAll('h2')].map(h => h.textContent.toLowerCase())"
        )
    )


def shot(driver: Any, name: str) -> None:
    """The page as the person sees it: a small PNG; written to docs/img/ with
    ROOST_SCREENSHOTS=1 (so a test run leaves the committed ones alone otherwise)."""
    driver.execute_script("window.scrollTo(0, 0)")
    png = driver.get_screenshot_as_png()
    assert png.startswith(b"\x89PNG") and len(png) < 100_000, len(png)
    if os.environ.get("ROOST_SCREENSHOTS") == "1":
        IMG.mkdir(parents=True, exist_ok=True)
        (IMG / name).write_bytes(png)


def test_fleet_page_shows_a_status_change_live_and_notifies(world: Env) -> None:
    for name in ("api", "docs"):
        spawn(world, name)
    world.roost("park", "docs")
    world.wait_status("api", "idle")
    with running(world) as web, chromium(world.tmp, 420, 760) as driver:
        driver.get(web.url)
        wait(driver, lambda d: badge_of(d, "api") == "idle")
        assert headings(driver)[-1] == "parked", headings(driver)
        driver.execute_script(RECORD_NOTIFICATIONS + "window.sameLoad = true;")
        # the page's stream is open: a change from now on is pushed to it (not one before)
        wait(driver, lambda d: d.execute_script("return document.body.dataset.live") == "1")
        world.type(world.pane_of("api"), "ask")  # a permission dialog: api waits for the person
        wait(driver, lambda d: badge_of(d, "api") == "waiting")
        # pushed into the page it had: no reload (the marker survives), and on top
        assert driver.execute_script("return window.sameLoad") is True
        wait(driver, lambda d: headings(d)[0] == "needs you")
        wait(driver, lambda d: d.execute_script("return window.notified.length") > 0)
        assert driver.execute_script("return window.notified") == ["api: waiting"]
        shot(driver, "web-fleet.png")


def test_agent_page_sends_with_receipt_and_answers_a_question(world: Env) -> None:
    spawn(world, "api")
    world.wait_status("api", "idle")
    with running(world) as web, chromium(world.tmp, 900, 900) as driver:
        driver.get(web.url)
        driver.get(web.base + "/a/api")
        box = driver.find_element(By.CSS_SELECTOR, "#send textarea")
        box.send_keys("hello from the browser")
        driver.find_element(By.CSS_SELECTOR, "#send button").click()
        receipt = wait(driver, lambda d: d.find_element(By.ID, "receipt").text.startswith("deliv"))
        assert receipt
        wait(driver, lambda d: "hello from the browser" in d.find_element(By.ID, "screen").text)
        world.type(world.pane_of("api"), "ask")
        choices = "return [...document.querySelectorAll('button.choice')].map(b => b.textContent)"
        wait(driver, lambda d: d.execute_script(choices) == ["1. Yes", "2. No"])
        shot(driver, "web-agent.png")
        asked = "return document.querySelector('#choices .question').textContent"
        assert driver.execute_script(asked) == "Do you want to proceed?"
        driver.find_element(By.CSS_SELECTOR, 'button.choice[data-key="1"]').click()
        wait(
            driver, lambda d: d.find_element(By.ID, "receipt").text.startswith("answered api: Yes")
        )
        wait(driver, lambda d: d.execute_script(choices) == [])
        world.wait_for(lambda: "Do you want to proceed?" not in world.screen(world.pane_of("api")))
        wait(driver, lambda d: "Do you want" not in d.find_element(By.ID, "screen").text)


def test_terminal_echoes_typing_only_with_the_typing_token(world: Env) -> None:
    assert (XTERM / "node_modules/@xterm/xterm/lib/xterm.js").is_file(), "run .ci/run's npm step"
    spawn(world, "api")
    world.wait_status("api", "idle")
    pane = world.pane_of("api")
    with running(world, "--allow-typing") as web, chromium(world.tmp, 900, 700) as driver:
        watch = (world.home / "web-token").read_text().strip()
        driver.get(f"{web.base}/login?token={watch}")  # a watcher first: read-only
        driver.get(web.base + "/a/api/term")
        wait(driver, lambda d: "❯" in _term_text(d))
        driver.find_element(By.CSS_SELECTOR, "#term textarea").send_keys("not-typed")
        driver.get(web.url)  # the typing token: may type
        driver.get(web.base + "/a/api/term")
        wait(driver, lambda d: "❯" in _term_text(d))
        driver.find_element(By.CSS_SELECTOR, "#term textarea").send_keys("typed-in-browser")
        wait(driver, lambda d: "typed-in-browser" in _term_text(d))
        assert "typed-in-browser" in world.screen(pane)
        assert "not-typed" not in world.screen(pane)
        shot(driver, "web-terminal.png")


def _term_text(driver: Any) -> str:
    lines = driver.execute_script(
        "const b = window.roostTerm && window.roostTerm.buffer.active; if (!b) return [];"
        "const out = []; for (let i = 0; i < b.length; i++) {"
        " out.push(b.getLine(i).translateToString(true)); } return out;"
    )
    return "\n".join(json.loads(json.dumps(lines)))
