"""Issue 39 point 4 in the web, in Debian's headless Chromium: the header's search box finds a
word one agent's turn held, its hit names the agent and turn (linked to its page) with the match
marked, and a query FTS5 cannot read is one line on the page, never a traceback. Phone-sized."""

from __future__ import annotations

from typing import Any

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from test_web_browser import shot, wait

from conftest import Env
from web_server import chromium, running

pytestmark = pytest.mark.tmux


def texts(driver: Any, css: str) -> list[str]:
    return list(
        driver.execute_script(
            "return [...document.querySelectorAll(arguments[0])].map(e => e.textContent)", css
        )
    )


def test_the_search_box_finds_a_turn_and_links_to_its_agent(world: Env) -> None:
    work = str(world.tmp / "work")
    for name in ("api", "docs"):
        world.roost("spawn", name, "--cwd", work)
        world.wait_status(name, "idle")
    world.roost("send", "api", "the rambutan <b>parser</b> fails on tabs")
    world.roost("send", "docs", "write the guide")
    with running(world) as web, chromium(world.tmp, 420, 860) as driver:
        driver.get(web.url)
        box = driver.find_element(By.CSS_SELECTOR, "header form.find input")
        box.send_keys("rambutan", Keys.ENTER)
        wait(driver, lambda d: texts(d, "ul.hits li a"))
        refs = texts(driver, "ul.hits li a")
        assert set(refs) == {"api@1"}, refs  # the prompt and its echoed reply: api's first turn
        assert texts(driver, "ul.hits mark")[0] == "rambutan"
        assert driver.execute_script("return document.querySelectorAll('ul.hits b').length") == 0
        shot(driver, "web-search.png")
        driver.find_element(By.CSS_SELECTOR, "ul.hits li a").click()
        wait(driver, lambda d: d.find_element(By.CSS_SELECTOR, ".agent-head h1").text == "api")

        driver.get(web.base + "/search?q=%22unclosed")
        said = wait(driver, lambda d: d.find_element(By.CSS_SELECTOR, "p.receipt.bad").text)
        assert said.startswith("search: FTS5 cannot read this query")
