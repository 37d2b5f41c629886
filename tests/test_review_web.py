"""Issue 38 point 1-2 in the web, in Debian's headless Chromium: an agent's Changes page shows
its files and hunks (syntax-highlighted, binary files named, escapes visible), a tap on a line
keeps a comment under it, "Send" sends the comments to the agent as one acknowledged message,
and a comment whose line changed since is shown outdated, not lost. Phone-sized window."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from selenium.webdriver.common.by import By
from test_review import git, repo, spawn_in_worktree
from test_web_browser import shot, wait

from conftest import Env
from web_server import running

__all__ = ["repo"]  # the fixture, used by name
pytestmark = pytest.mark.tmux


def texts(driver: Any, css: str) -> list[str]:
    return list(
        driver.execute_script(
            "return [...document.querySelectorAll(arguments[0])].map(e => e.textContent)", css
        )
    )


def test_the_changes_page_shows_comments_and_sends_a_review(world: Env, repo: Path) -> None:
    received = world.tmp / "received"
    wt = spawn_in_worktree(
        world, repo, "api", "--provider", "claude", env={"FAKE_AGENT_RECEIVED_DIR": str(received)}
    )
    world.wait_status("api", "idle")
    app = wt / "app.py"
    app.write_text(app.read_text().replace("line 5\n", "line 5\ndef retry():  # again\n"))
    git(wt, "commit", "-qam", "retry")
    (wt / "logo.png").write_bytes(b"\x89PNG\x00\x09" * 30)
    (wt / "odd \x1b[31m.txt").write_text("<script>alert(1)</script>\n")
    with running(world) as web, chromium_phone(world) as driver:
        driver.get(web.url)
        driver.get(web.base + "/a/api/changes")
        files = texts(driver, "ul.files li a")
        assert files == ["app.py", "logo.png", "odd \\x1b[31m.txt"], files
        assert "binary" in texts(driver, "ul.files li")[1]
        added = texts(driver, "tr.add td.code")
        assert "+def retry():  # again" in added and "+<script>alert(1)</script>" in added
        no_script = "return document.querySelectorAll('main script').length"
        assert driver.execute_script(no_script) == 0  # the file's text escaped, never markup
        keyword = "return document.querySelector('tr.add td.code span.t-k').textContent"
        assert driver.execute_script(keyword) == "def"  # Pygments' lexer for a .py file
        shot(driver, "web-changes.png")

        line = driver.find_element(
            By.CSS_SELECTOR, 'section[data-path="app.py"] tr[data-line="6"] td.ln.new'
        )
        line.click()
        box = wait(driver, lambda d: d.find_element(By.CSS_SELECTOR, "tr.comment-form textarea"))
        box.send_keys("cap the retries")
        driver.find_element(By.CSS_SELECTOR, "tr.comment-form button").click()
        wait(driver, lambda d: texts(d, "tr.comment-row .comment") != [])
        (row,) = texts(driver, "tr.comment-row .comment")
        assert "open" in row and "app.py, line 6: cap the retries" in row
        assert world.roost("comment", "api", "--list").stdout.count("cap the retries") == 1

        driver.find_element(By.ID, "review-send").click()
        wait(driver, lambda d: d.find_element(By.ID, "receipt").text.startswith("deliv"))
        got = world.wait_for(
            lambda: [p.read_text() for p in sorted(received.glob("*.txt"))], what="the review"
        )
        assert "app.py, line 6" in got[-1] and "cap the retries" in got[-1]
        world.wait_status("api", "idle")

        # a comment on a line the agent then changes: outdated on the page, not lost
        world.roost("comment", "api", "app.py:6", "and log each one")
        app.write_text(app.read_text().replace("def retry():  # again\n", "def retry(n=3):\n"))
        driver.get(web.base + "/a/api/changes")
        states = texts(driver, "section[data-path='app.py'] .comment .badge")
        assert sorted(states) == ["addressed", "outdated"], states


def chromium_phone(world: Env) -> Any:
    from web_server import chromium

    return chromium(world.tmp, 420, 860)


def test_the_changes_page_merges_and_says_a_refusal(world: Env, repo: Path) -> None:
    wt = spawn_in_worktree(world, repo, "api")
    (wt / "feature.py").write_text("x = 1\n")
    git(wt, "add", "feature.py")
    git(wt, "commit", "-qm", "feature")
    (repo / "README").write_text("edited by hand\n")  # the main checkout is dirty: refused
    before = git(repo, "rev-parse", "HEAD")
    with running(world) as web, chromium_phone(world) as driver:
        driver.get(web.url)
        driver.get(web.base + "/a/api/changes")
        driver.execute_script("window.confirm = () => true")
        driver.find_element(By.ID, "merge").click()
        said = wait(driver, lambda d: d.find_element(By.CSS_SELECTOR, "#receipt.bad").text)
        assert "the main checkout has uncommitted changes (README)" in said
        assert git(repo, "rev-parse", "HEAD") == before
        git(repo, "checkout", "--", "README")
        driver.find_element(By.CSS_SELECTOR, "#merge-mode option[value=squash]").click()
        driver.find_element(By.ID, "merge").click()
        said = wait(
            driver,
            lambda d: (
                d.find_element(By.ID, "receipt").text.startswith("merged")
                and d.find_element(By.ID, "receipt").text
            ),
        )
        assert said.startswith("merged api (roost/api) into main: 1 commit squashed into one")
    assert (repo / "feature.py").read_text() == "x = 1\n"
    assert git(repo, "rev-parse", "HEAD") != before


def test_the_changes_page_merges_the_hunks_ticked_as_they_were_drawn(
    world: Env, repo: Path
) -> None:
    wt = spawn_in_worktree(world, repo, "api")
    app = wt / "app.py"
    app.write_text(app.read_text().replace("line 2\n", "line two\n").replace("line 18\n", "18!\n"))
    git(wt, "commit", "-qam", "two hunks")
    before = git(repo, "rev-parse", "HEAD")
    with running(world) as web, chromium_phone(world) as driver:
        driver.get(web.url)
        driver.get(web.base + "/a/api/changes")
        driver.execute_script("window.confirm = () => true")
        button = driver.find_element(By.ID, "merge-hunks")
        assert not button.is_enabled()
        picks = driver.find_elements(By.CSS_SELECTOR, 'section[data-path="app.py"] .hunk-pick')
        assert [p.get_attribute("data-hunk") for p in picks] == ["1", "2"]
        picks[1].click()
        assert button.is_enabled() and button.text == "Merge 1 selected hunk"
        # without the session's CSRF header the same request is refused, nothing changed
        status = driver.execute_async_script(
            "const done = arguments[0];"
            "fetch('/a/api/merge-hunks', {method: 'POST', credentials: 'same-origin',"
            " headers: {'content-type': 'application/json'},"
            " body: JSON.stringify({hunks: [{path: 'app.py', number: 2, fingerprint: 'x'}]})})"
            ".then(r => done(r.status))"
        )
        assert status == 403 and git(repo, "rev-parse", "HEAD") == before
        # the agent changes hunk 2 after the page drew it: refused, nothing changed
        app.write_text(app.read_text().replace("18!\n", "eighteen\n"))
        button.click()
        said = wait(driver, lambda d: d.find_element(By.CSS_SELECTOR, "#receipt.bad").text)
        assert "the diff changed since it was shown (app.py:2" in said
        assert git(repo, "rev-parse", "HEAD") == before
        driver.get(web.base + "/a/api/changes")  # reload: hunk 2 as it is now
        driver.execute_script("window.confirm = () => true")
        driver.find_elements(By.CSS_SELECTOR, 'section[data-path="app.py"] .hunk-pick')[1].click()
        driver.find_element(By.ID, "merge-hunks").click()
        said = wait(
            driver,
            lambda d: (
                d.find_element(By.ID, "receipt").text.startswith("merged")
                and d.find_element(By.ID, "receipt").text
            ),
        )
        assert said.startswith("merged api (roost/api) into main: 1 hunk as one commit"), said
    text = (repo / "app.py").read_text()
    assert "line 2\n" in text and "eighteen\n" in text and "line two" not in text
    assert git(repo, "log", "-1", "--format=%P") == before
