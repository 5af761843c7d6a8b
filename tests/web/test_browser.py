"""The chat page in a real browser: headless Chromium (Debian's ``chromium`` and
``chromium-driver``, driven by Selenium) against a real uvicorn on 127.0.0.1.

The Pilates scenario with a scripted model that streams slowly: the answer appears token by
token, the follow-up "Et pour le samedi ?" is answered from memory with its rewritten
question and sources under it, the memory panel shows the window; "Nouvelle conversation"
empties the session's memory, "Oublier toutes mes données" everything. A screenshot is
saved in ``$MEMORY_CHAINS_TEST_ARTIFACTS`` (default ``test-artifacts/`` at the repository
root). About 10 s.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from memory_chains.web import ChatService
from tests.web._helpers import (
    PILATES,
    PILATES_ANSWER,
    SATURDAY,
    SATURDAY_ANSWER,
    MakeService,
    SlowScriptedModel,
    kb_answer,
    running_uvicorn,
)

CHROMIUM = Path("/usr/bin/chromium")
CHROMEDRIVER = Path("/usr/bin/chromedriver")

pytestmark = pytest.mark.skipif(
    not (CHROMIUM.exists() and CHROMEDRIVER.exists()),
    reason="needs Debian's chromium and chromium-driver (/usr/bin/chromium, "
    "/usr/bin/chromedriver): apt-get install chromium chromium-driver (.ci/run does)",
)
webdriver = pytest.importorskip("selenium.webdriver", reason="needs selenium (the dev extra)")

from selenium.common.exceptions import StaleElementReferenceException  # noqa: E402
from selenium.webdriver.chrome.service import Service  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.support.ui import WebDriverWait  # noqa: E402

ARTIFACTS = Path(os.environ.get("MEMORY_CHAINS_TEST_ARTIFACTS", "test-artifacts"))


@pytest.fixture
def server(make_service: MakeService) -> Iterator[tuple[str, ChatService]]:
    # a token every 0.1 s: the partial answer stays on the page long enough to be seen by a
    # browser polled slowly on a busy machine
    service = make_service(llm=SlowScriptedModel(default=kb_answer, delay=0.1))
    with running_uvicorn(service) as url:
        yield url, service


@pytest.fixture
def browser() -> Iterator[Any]:
    os.environ.setdefault("SE_OFFLINE", "true")  # never let Selenium Manager download
    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for argument in (
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--window-size=1280,860",
        "--lang=fr-FR",
    ):
        options.add_argument(argument)
    options.add_experimental_option("prefs", {"intl.accept_languages": "fr-FR,fr"})
    driver = webdriver.Chrome(service=Service(executable_path=str(CHROMEDRIVER)), options=options)
    driver.set_page_load_timeout(20)
    try:
        yield driver
    finally:
        driver.quit()


def _ask(driver: Any, question: str) -> None:
    box = driver.find_element(By.ID, "message")
    box.send_keys(question)
    driver.find_element(By.ID, "send").click()


def _answers(driver: Any) -> list[Any]:
    return driver.find_elements(By.CSS_SELECTOR, "#messages .msg.assistant")


def _done(driver: Any, count: int) -> bool:
    return len(driver.find_elements(By.CSS_SELECTOR, "#messages .msg.assistant.done")) == count


def _turns_shown(driver: Any) -> str | None:
    return driver.find_element(By.TAG_NAME, "body").get_attribute("data-memory-turns")


def _block_items(driver: Any, name: str) -> list[str]:
    # read in one script: the panel is re-rendered after every answer (no stale elements)
    script = "return Array.from(document.querySelectorAll(arguments[0]), li => li.textContent);"
    return list(driver.execute_script(script, f'[data-block="{name}"] li:not(.empty)'))


def test_the_pilates_scenario_in_a_real_browser(
    server: tuple[str, ChatService], browser: Any
) -> None:
    url, service = server
    wait = WebDriverWait(
        browser, 20, poll_frequency=0.02, ignored_exceptions=(StaleElementReferenceException,)
    )
    browser.get(url + "/")
    wait.until(lambda d: d.find_element(By.ID, "session-id").text.startswith("s-"))
    assert browser.find_element(By.ID, "new-conversation").text == "Nouvelle conversation"
    first_session = browser.find_element(By.ID, "session-id").text

    _ask(browser, PILATES)
    # streamed: part of the answer is on the page before the end of the stream
    partial: str = wait.until(
        lambda d: next(
            (
                a.text
                for a in _answers(d)
                if "streaming" in a.get_attribute("class") and 0 < len(a.text) < len(PILATES_ANSWER)
            ),
            None,
        )
    )
    assert PILATES_ANSWER.startswith(partial.rstrip("▍").strip())
    wait.until(lambda d: _done(d, 1))
    assert _answers(browser)[0].find_element(By.CSS_SELECTOR, ".text").text == PILATES_ANSWER

    _ask(browser, SATURDAY)
    wait.until(lambda d: _done(d, 2))
    second = _answers(browser)[1]
    assert second.find_element(By.CSS_SELECTOR, ".text").text == SATURDAY_ANSWER
    rewritten = second.find_element(By.CSS_SELECTOR, ".rewritten").text
    assert "question réécrite" in rewritten
    assert "Pilates" in rewritten and "samedi" in rewritten
    assert "salle_de_sport/pilates.md" in second.find_element(By.CSS_SELECTOR, ".sources").text

    wait.until(
        lambda d: d.find_element(By.TAG_NAME, "body").get_attribute("data-memory-turns") == "2"
    )
    window = _block_items(browser, "recent")
    assert len(window) == 2 and PILATES in window[0] and SATURDAY in window[1]
    tokens = browser.find_element(By.CSS_SELECTOR, '[data-block="recent"] .tokens').text
    assert int(tokens.split()[0]) > 0
    assert _block_items(browser, "entities")  # the user-level memories learnt something
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    assert browser.save_screenshot(str(ARTIFACTS / "web-chat.png"))

    browser.find_element(By.ID, "new-conversation").click()
    wait.until(lambda d: d.find_element(By.ID, "session-id").text != first_session)
    wait.until(
        lambda d: d.find_element(By.TAG_NAME, "body").get_attribute("data-memory-turns") == "0"
    )
    assert not _answers(browser)
    assert _block_items(browser, "recent") == [] and _block_items(browser, "summary") == []
    assert service.store.count_turns("guest", first_session) == 0  # forgotten, not hidden

    browser.find_element(By.ID, "lang").click()  # the English strings
    assert browser.find_element(By.ID, "new-conversation").text == "New conversation"
    browser.find_element(By.ID, "forget-user").click()
    browser.switch_to.alert.accept()
    wait.until(lambda d: not _block_items(d, "entities") and not _block_items(d, "profile"))
    assert service.store.list_sessions("guest") == []
