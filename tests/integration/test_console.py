"""The web console (episodic/console/static/) in a real headless browser against a real
`episodic serve --http-port` on a small ingested memory: Debian's chromium driven by Selenium
through /usr/bin/chromedriver (nothing is downloaded; skipped when either is missing).

One memory per module: a 24 s recording ingested as stream "cam" (three segments; its last
transcript piece and event summary are then rewritten to carry HTML and script) and an 8 s one
as "garden". The server has two API keys: one for every stream, one for "cam" only. Its
language model is a stand-in on loopback (tests/openai_standin.py) so that Ask and Article
answer in milliseconds; retrieval, evidence, search and media are the real ones.

Checked: the key prompt on 401 and the key kept in sessionStorage only; the timeline shows one
card per event, zooms, and a card plays its snippet; search results are listed and marked on
the timeline; Ask shows the answer, a confidence bar, the pathway and evidence, and clicking
evidence seeks the video to it; an article's citation seeks the video; the Alerts tab lists a
watch, adds one through its form (a refusal shows the server's message) and removes it; a Recall
result card plays its moment; a key scoped to "cam" never shows "garden" anywhere (page and every API response);
no horizontal overflow at a phone's 375 px; server text with HTML stays text (no element, no
alert); no script errors or CSP violations. Screenshots go to tests/artifacts/console/.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from episodic import samples
from tests.openai_standin import ChatStandIn, chat_reply

pytestmark = pytest.mark.slow  # a real ingest, a real server and a real browser

CHROMIUM = Path("/usr/bin/chromium")
CHROMEDRIVER = Path("/usr/bin/chromedriver")
ARTIFACTS = Path(__file__).resolve().parents[1] / "artifacts" / "console"
KEY_ALL = "console-all-key-0123456789abcdef"
KEY_CAM = "console-cam-key-0123456789abcdef"
INJECTED_PIECE = "<img src=x onerror=alert(1)><script>alert(2)</script>"
INJECTED_SUMMARY = " <b id=injected>bold</b><img src=x onerror=alert(3)>"
ANSWER = "Three green apples went into the blue bowl."

if not (CHROMIUM.exists() and CHROMEDRIVER.exists()):
    pytest.skip(
        "the console tests need Debian's chromium and chromium-driver (/usr/bin/chromium, "
        "/usr/bin/chromedriver): apt-get install chromium chromium-driver",
        allow_module_level=True,
    )
webdriver = pytest.importorskip("selenium.webdriver", reason="selenium is not installed (pip install -e '.[dev]')")
from selenium.common.exceptions import NoAlertPresentException  # noqa: E402
from selenium.webdriver.chrome.service import Service  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.common.keys import Keys  # noqa: E402
from selenium.webdriver.support.ui import WebDriverWait  # noqa: E402


# -- the memory, the server, the browser ----------------------------------------------------------
@pytest.fixture(scope="module")
def memory(tmp_path_factory) -> Path:
    from episodic.components import Components
    from episodic.config import Settings, load_settings
    from episodic.core.records import TranscriptPiece
    from episodic.memory.milvus_store import MilvusStore
    from episodic.pipeline import ingest_file

    tmp = tmp_path_factory.mktemp("console")
    cam = tmp / "cam.mp4"
    samples.make_recording(
        cam,
        [samples.Scene(8, seed=1, text="KITCHEN"), samples.Scene(8, seed=2, text="PLATFORM 7"),
         samples.Scene(8, seed=3, tint=(200, 60, 60))],
        [samples.Speech(1.0, "Tom put three green apples in the blue bowl."),
         samples.Speech(9.0, "The train to Oxford leaves from platform seven."),
         samples.Speech(17.0, "The library closes at six tonight.")],
    )
    other = tmp / "other.mp4"
    samples.make_recording(other, [samples.Scene(8, seed=4, text="GARDEN")],
                           [samples.Speech(1.0, "Priya keeps the watering can by the shed.")])
    data = tmp / "data"
    components = Components(load_settings(data_dir=data))
    try:
        ingest_file(cam, "cam", components)
        ingest_file(other, "garden", components)
    finally:
        components.close()
    with MilvusStore(Settings(data_dir=data)) as store:  # server text that carries HTML
        last = store.list_memories("cam", with_vectors=True)[-1]
        last.transcript = [*last.transcript, TranscriptPiece(last.t_end - 1.0, last.t_end - 0.5, INJECTED_PIECE)]
        store.upsert_memories([last])
        event = store.list_events("cam", with_vectors=True)[-1]
        event.summary += INJECTED_SUMMARY
        store.upsert_events([event])
    return data


@pytest.fixture(scope="module")
def standin() -> Iterator[ChatStandIn]:
    server = ChatStandIn()
    server.responder = lambda _request: (200, chat_reply(ANSWER))
    yield server
    server.close()


@pytest.fixture(scope="module")
def base(memory: Path, standin: ChatStandIn, tmp_path_factory) -> Iterator[str]:
    """`episodic serve --port 0 --http-port 0` on the memory; its console's URL."""
    conf = tmp_path_factory.mktemp("console-conf")
    keys = conf / "keys.toml"
    keys.write_text(f'"{KEY_ALL}" = ["*"]\n"{KEY_CAM}" = ["cam"]\n')
    keys.chmod(0o600)
    config = conf / "episodic.toml"
    config.write_text(
        f'api_keys_file = "{keys}"\nllm = "openai"\nopenai_base_url = "{standin.url}"\n'
        'openai_model = "test-model"\nrelisten_max_memories = 0\n'
    )
    proc = subprocess.Popen(
        [sys.executable, "-m", "episodic.cli", "serve", "--port", "0", "--http-port", "0",
         "--data", str(memory), "--config", str(config)],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
        env={**os.environ, "EPISODIC_DATA": str(memory)},
    )
    try:
        url = ""
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            line = proc.stdout.readline()
            if not line:
                break
            if line.startswith("http on "):
                url = line.split("http on ", 1)[1].strip().rstrip("/")
                break
        assert url, f"episodic serve did not start its HTTP API (exit {proc.poll()})"
        call(url, "/v1/watches", KEY_ALL, {"query": "the train to Oxford"})  # for the Alerts tab
        yield url
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def call(base: str, path: str, key: str, body: Any = None) -> Any:
    req = urllib.request.Request(
        base + path, data=None if body is None else json.dumps(body).encode(),
        headers={"Authorization": f"Bearer {key}", "Content-Type": "application/json"},
        method="GET" if body is None else "POST",
    )
    with urllib.request.urlopen(req, timeout=60) as r:
        return json.loads(r.read())


@pytest.fixture(scope="module")
def driver() -> Iterator[Any]:
    os.environ.setdefault("SE_OFFLINE", "true")  # Selenium Manager must never fetch a driver
    opts = webdriver.ChromeOptions()
    opts.binary_location = str(CHROMIUM)
    for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--mute-audio",
                "--disable-background-networking", "--no-first-run"):
        opts.add_argument(arg)
    opts.set_capability("goog:loggingPrefs", {"browser": "ALL", "performance": "ALL"})
    d = webdriver.Chrome(service=Service(executable_path=str(CHROMEDRIVER)), options=opts)
    d.set_window_size(1400, 1000)
    try:
        yield d
    finally:
        d.quit()


def wait(d: Any, what: Any, timeout: float = 30) -> Any:
    return WebDriverWait(d, timeout, poll_frequency=0.1).until(lambda _d: what())


def js(d: Any, script: str, *args: Any) -> Any:
    return d.execute_script(script, *args)


def open_console(d: Any, base: str, key: str, stream: str = "cam") -> None:
    """A fresh tab state: load the console, answer the key prompt, wait for the timeline."""
    d.get(base + "/healthz")
    js(d, "sessionStorage.clear()")
    d.get_log("performance")  # drop what came before
    d.get(f"{base}/#stream={stream}")
    wait(d, lambda: js(d, "return document.getElementById('key-dialog').open"))
    d.find_element(By.ID, "key-input").send_keys(key)
    d.find_element(By.ID, "key-use").click()
    wait(d, lambda: js(d, "return document.getElementById('cards').dataset.loaded === 'true'"))
    assert js(d, "return sessionStorage.getItem('episodic.apiKey')") == key
    assert key not in d.current_url


def tab(d: Any, name: str) -> None:
    d.find_element(By.ID, f"tab-{name}").click()
    wait(d, lambda: d.find_element(By.ID, f"panel-{name}").is_displayed())


def shoot(d: Any, name: str, tmp_path: Path) -> None:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    path = tmp_path / f"{name}.png"
    d.save_screenshot(str(path))
    shutil.copy(path, ARTIFACTS / path.name)


def seek_of(d: Any, base: str, segment_id: str, t: float) -> tuple[float, float]:
    """(the video's currentTime once it plays ``segment_id``, where ``t`` lies in its snippet)."""
    wait(d, lambda: js(d, "const v = document.getElementById('player');"
                          "return v.dataset.segmentId === arguments[0] && v.readyState >= 1 && !!v.src", segment_id))
    segment = call(base, f"/v1/segments/{segment_id}", KEY_ALL)
    snippet = next(s for s in segment["snippets"] if s["t_start"] - 1e-3 <= t < s["t_end"] + 1e-3)
    assert js(d, "return document.getElementById('player').src").split("?")[0].endswith(
        f"/v1/segments/{segment_id}/snippets/{snippet['index']}")
    return js(d, "return document.getElementById('player').currentTime"), t - snippet["t_start"]


def no_script_errors(d: Any) -> None:
    bad = [e["message"] for e in d.get_log("browser")
           if e["level"] == "SEVERE" and ("Content Security Policy" in e["message"] or "Uncaught" in e["message"])]
    assert not bad, bad


# -- the tests ------------------------------------------------------------------------------------
def test_timeline_shows_every_event_zooms_and_plays_a_card(driver, base, tmp_path) -> None:
    d = driver
    open_console(d, base, KEY_ALL)
    events = call(base, "/v1/streams/cam/events?page_size=500", KEY_ALL)["events"]
    assert len(events) >= 3
    assert len(d.find_elements(By.CSS_SELECTOR, "#cards .card")) == len(events)
    assert [c.get_attribute("data-event-id") for c in d.find_elements(By.CSS_SELECTOR, "#cards .card")] == [
        e["id"] for e in events]
    assert len(d.find_elements(By.CSS_SELECTOR, "#track .ev")) == len(events)
    chips = [c.get_attribute("data-stream-id") for c in d.find_elements(By.CSS_SELECTOR, ".stream-chip")]
    assert sorted(chips) == ["cam", "garden"]
    header = d.find_element(By.CSS_SELECTOR, ".stream-chip[aria-pressed='true']").text
    assert "cam" in header and "3 segments" in header and "kB" in header  # span, segments, storage
    # thumbnails arrive lazily, through the segments' signed URLs
    wait(d, lambda: js(d, "return [...document.querySelectorAll('#cards img')].some(i => i.complete && i.naturalWidth > 0)"))
    assert js(d, "return [...document.querySelectorAll('#cards img')].every(i => i.loading === 'lazy')")
    # zoom in: a shorter span, fewer cards, new ruler labels; back out: all again
    labels = [t.text for t in d.find_elements(By.CSS_SELECTOR, "#ruler .tick")]
    d.find_element(By.ID, "zoom-in").click()
    d.find_element(By.ID, "pan").send_keys(Keys.HOME)  # move to the stream's start
    assert d.find_element(By.ID, "track-range").text.startswith("Showing 0:00–0:10")
    shown = js(d, "return [...document.querySelectorAll('#cards .card')].filter(c => !c.hidden).length")
    assert 0 < shown < len(events)
    assert [t.text for t in d.find_elements(By.CSS_SELECTOR, "#ruler .tick")] != labels
    d.find_element(By.ID, "zoom-out").click()
    d.find_element(By.ID, "zoom-out").click()
    wait(d, lambda: js(d, "return [...document.querySelectorAll('#cards .card')].every(c => !c.hidden)"))
    # a card plays its snippet from the event's start
    second = events[1]
    d.find_elements(By.CSS_SELECTOR, "#cards .card-play")[1].click()
    now, want = seek_of(d, base, second["segment_id"], second["t_start"])
    assert want - 0.1 <= now <= want + 2.0
    assert "active" in d.find_elements(By.CSS_SELECTOR, "#cards .card")[1].get_attribute("class")
    # the Alerts tab lists the watch the fixture added
    tab(d, "alerts")
    wait(d, lambda: "the train to Oxford" in d.find_element(By.ID, "watch-list").text)
    tab(d, "timeline")
    shoot(d, "desktop-timeline", tmp_path)
    no_script_errors(d)


def test_search_lists_results_and_marks_them_on_the_timeline(driver, base, tmp_path) -> None:
    d = driver
    open_console(d, base, KEY_ALL)
    tab(d, "search")
    d.find_element(By.ID, "search-query").send_keys("the train to Oxford platform")
    d.find_element(By.CSS_SELECTOR, "#search-form button[type=submit]").click()
    wait(d, lambda: d.find_elements(By.CSS_SELECTOR, "#search-results .moment"))
    results = d.find_elements(By.CSS_SELECTOR, "#search-results .moment")
    assert "platform" in results[0].text.lower() and "cam" in results[0].text
    assert d.find_element(By.ID, "search-count").text == str(len(results))
    assert d.find_elements(By.CSS_SELECTOR, "#track .hit")  # marked on the axis
    assert d.find_elements(By.CSS_SELECTOR, "#cards .card.hit")  # and on the cards
    shoot(d, "desktop-search", tmp_path)
    seg_id, t0 = results[0].get_attribute("data-segment-id"), float(results[0].get_attribute("data-t0"))
    results[0].click()
    now, want = seek_of(d, base, seg_id, t0)
    assert want - 0.1 <= now <= want + 2.0
    # search by picture: a key frame of the garden stream finds the garden first
    segment = call(base, "/v1/segments/" + call(base, "/v1/streams/garden/events", KEY_ALL)["events"][0]["segment_id"], KEY_ALL)
    picture = tmp_path / "look-alike.jpg"
    with urllib.request.urlopen(segment["thumbnail_url"], timeout=30) as r:  # a signed URL: no header
        picture.write_bytes(r.read())
    d.find_element(By.ID, "search-clear").click()
    assert not d.find_elements(By.CSS_SELECTOR, "#track .hit")
    d.find_element(By.ID, "search-image").send_keys(str(picture))
    d.find_element(By.CSS_SELECTOR, "#search-form button[type=submit]").click()
    wait(d, lambda: "look-alike.jpg" in d.find_element(By.ID, "search-status").text, timeout=60)
    found = d.find_elements(By.CSS_SELECTOR, "#search-results .moment")
    assert found and found[0].get_attribute("data-stream-id") == "garden", d.find_element(By.ID, "search-status").text
    no_script_errors(d)


def test_ask_shows_answer_confidence_pathway_and_evidence_that_seeks(driver, base, tmp_path) -> None:
    d = driver
    open_console(d, base, KEY_ALL)
    tab(d, "ask")
    d.find_element(By.ID, "ask-question").send_keys("What did Tom put in the blue bowl?")
    d.find_element(By.CSS_SELECTOR, "#ask-form button[type=submit]").click()
    wait(d, lambda: d.find_elements(By.CSS_SELECTOR, "#ask-answer .answer-text"), timeout=120)
    assert d.find_element(By.CSS_SELECTOR, "#ask-answer .answer-text").text.strip()
    meter = d.find_element(By.CSS_SELECTOR, "#ask-answer .answer-meta [role=meter]")
    assert 0.0 <= float(meter.get_attribute("aria-valuenow")) <= 1.0
    assert "pathway:" in d.find_element(By.CSS_SELECTOR, "#ask-answer .answer-meta").text
    evidence = [e for e in d.find_elements(By.CSS_SELECTOR, "#ask-answer .moment") if e.get_attribute("data-segment-id")]
    assert evidence, d.find_element(By.ID, "ask-answer").text
    # the evidence that is not at its segment's start shows the seek best
    pick = max(evidence, key=lambda e: float(e.get_attribute("data-t0")) % 8)
    seg_id, t0 = pick.get_attribute("data-segment-id"), float(pick.get_attribute("data-t0"))
    shoot(d, "desktop-ask", tmp_path)
    pick.click()
    now, want = seek_of(d, base, seg_id, t0)
    assert want - 0.1 <= now <= want + 2.0, (now, want)
    no_script_errors(d)


def test_article_citation_seeks_the_video(driver, base, tmp_path) -> None:
    d = driver
    open_console(d, base, KEY_ALL)
    tab(d, "article")
    d.find_element(By.ID, "article-topic").send_keys("The train to Oxford from platform seven, and the green apples")
    d.find_element(By.CSS_SELECTOR, "#article-style option[value=bullet]").click()
    d.find_element(By.CSS_SELECTOR, "#article-form button[type=submit]").click()
    wait(d, lambda: d.find_elements(By.CSS_SELECTOR, "#article-out .article-title"), timeout=120)
    cites = d.find_elements(By.CSS_SELECTOR, "#article-out .cite")
    assert cites, d.find_element(By.ID, "article-out").text
    article = call(base, "/v1/articles", KEY_ALL,
                   {"request": "The train to Oxford from platform seven, and the green apples", "style": "bullet"})
    by_n = {c["n"]: c for c in article["citations"]}
    button = max(cites, key=lambda b: by_n[int(b.get_attribute("data-n"))]["t_start"] % 8)  # not at a segment start
    cite = by_n[int(button.get_attribute("data-n"))]
    button.click()
    now, want = seek_of(d, base, cite["segment_id"], cite["t_start"])
    assert want - 0.1 <= now <= want + 2.0
    shoot(d, "desktop-article", tmp_path)
    no_script_errors(d)


def test_html_from_the_server_is_shown_as_text(driver, base) -> None:
    d = driver
    open_console(d, base, KEY_ALL)
    last = d.find_elements(By.CSS_SELECTOR, "#cards .card")[-1]
    assert INJECTED_SUMMARY.strip() in last.find_element(By.CSS_SELECTOR, ".card-summary").get_attribute("textContent")
    last.find_element(By.CSS_SELECTOR, "details summary").click()
    wait(d, lambda: INJECTED_PIECE in last.find_element(By.CSS_SELECTOR, ".more-body").get_attribute("textContent"))
    last.find_element(By.CSS_SELECTOR, ".card-play").click()  # and in the player's segment view
    wait(d, lambda: INJECTED_PIECE in d.find_element(By.ID, "segment-detail").get_attribute("textContent"))
    time.sleep(0.3)
    assert js(d, "return document.querySelectorAll('#injected, img[src=\"x\"], b#injected').length") == 0
    assert js(d, "return [...document.scripts].every(s => s.src && !s.textContent.trim())")
    with pytest.raises(NoAlertPresentException):
        d.switch_to.alert.text  # noqa: B018 (the property raises when no alert is open)
    no_script_errors(d)


def test_a_key_for_one_stream_never_shows_the_other(driver, base) -> None:
    d = driver
    open_console(d, base, KEY_CAM)
    tab(d, "search")
    d.find_element(By.ID, "search-query").send_keys("watering can by the shed")
    d.find_element(By.CSS_SELECTOR, "#search-form button[type=submit]").click()
    wait(d, lambda: d.find_element(By.ID, "search-status").text.strip() not in ("", "Searching…"))
    tab(d, "ask")
    d.find_element(By.ID, "ask-question").send_keys("Who keeps the watering can by the shed?")
    d.find_element(By.CSS_SELECTOR, "#ask-form button[type=submit]").click()
    wait(d, lambda: d.find_elements(By.CSS_SELECTOR, "#ask-answer .answer-text") or "No answer" in d.find_element(By.ID, "ask-status").text, timeout=120)
    tab(d, "timeline")
    assert [c.get_attribute("data-stream-id") for c in d.find_elements(By.CSS_SELECTOR, ".stream-chip")] == ["cam"]
    assert [o.get_attribute("value") for o in d.find_elements(By.CSS_SELECTOR, "#search-scope option")] == ["", "cam"]
    page = d.page_source.lower() + js(d, "return document.body.innerText").lower()
    assert "garden" not in page and "priya" not in page
    # every API response the page received
    bodies = 0
    for entry in d.get_log("performance"):
        msg = json.loads(entry["message"])["message"]
        if msg["method"] != "Network.responseReceived" or "/v1/" not in msg["params"]["response"]["url"]:
            continue
        if "/snippets/" in msg["params"]["response"]["url"] or "/thumbnail" in msg["params"]["response"]["url"]:
            continue
        try:
            body = d.execute_cdp_cmd("Network.getResponseBody", {"requestId": msg["params"]["requestId"]})["body"]
        except Exception:  # noqa: BLE001 (a body the browser no longer holds)
            continue
        bodies += 1
        assert "garden" not in body.lower() and "priya" not in body.lower(), msg["params"]["response"]["url"]
    assert bodies >= 4  # streams, events, search, ask at least


def test_phone_width_has_no_horizontal_overflow(driver, base, tmp_path) -> None:
    d = driver
    d.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {"width": 375, "height": 812, "deviceScaleFactor": 2, "mobile": True})
    try:
        open_console(d, base, KEY_ALL)
        wide = "return [document.documentElement.scrollWidth, window.innerWidth]"
        scroll, inner = js(d, wide)
        assert inner == 375 and scroll <= inner, (scroll, inner)
        d.find_elements(By.CSS_SELECTOR, "#cards .card-play")[0].click()
        wait(d, lambda: js(d, "return !!document.getElementById('player').src"))
        last = d.find_elements(By.CSS_SELECTOR, "#cards .card")[-1]
        last.find_element(By.CSS_SELECTOR, "details summary").click()
        wait(d, lambda: INJECTED_PIECE in last.get_attribute("textContent"))
        scroll, inner = js(d, wide)
        assert scroll <= inner, (scroll, inner)
        js(d, "window.scrollTo(0, 0)")
        shoot(d, "phone-top", tmp_path)
        js(d, "document.getElementById('panel-timeline').scrollIntoView()")
        shoot(d, "phone-timeline", tmp_path)
        tab(d, "search")
        d.find_element(By.ID, "search-query").send_keys("green apples in the blue bowl")
        d.find_element(By.CSS_SELECTOR, "#search-form button[type=submit]").click()
        wait(d, lambda: d.find_elements(By.CSS_SELECTOR, "#search-results .moment"))
        scroll, inner = js(d, wide)
        assert scroll <= inner, (scroll, inner)
        js(d, "document.getElementById('panel-search').scrollIntoView()")
        shoot(d, "phone-search", tmp_path)
    finally:
        d.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})


def test_watch_form_adds_and_removes_and_recall_plays_its_moment(driver, base, tmp_path) -> None:
    d = driver
    open_console(d, base, KEY_ALL)
    tab(d, "alerts")
    wait(d, lambda: "the train to Oxford" in d.find_element(By.ID, "watch-list").text)
    # a refusal of the server shows in the form, as its message
    d.find_element(By.CSS_SELECTOR, "#watch-kind option[value=absent]").click()
    assert d.find_element(By.ID, "watch-by").is_displayed() and not d.find_element(By.ID, "watch-then").is_displayed()
    d.find_element(By.ID, "watch-query").send_keys("someone opens the shop")
    d.find_element(By.ID, "watch-by").send_keys("25:99")
    d.find_element(By.CSS_SELECTOR, "#watch-form button[type=submit]").click()
    wait(d, lambda: d.find_element(By.ID, "watch-error").is_displayed())
    assert "HH:MM" in d.find_element(By.ID, "watch-error").text
    # an order watch on "cam": listed with its second query, then removed after a confirm
    d.find_element(By.CSS_SELECTOR, "#watch-kind option[value=order]").click()
    assert d.find_element(By.ID, "watch-then").is_displayed() and not d.find_element(By.ID, "watch-by").is_displayed()
    d.find_element(By.ID, "watch-then").send_keys("<b>a van</b> drives in")
    d.find_element(By.ID, "watch-within").send_keys("10m")
    d.find_element(By.CSS_SELECTOR, "#watch-scope option[value=cam]").click()
    d.find_element(By.ID, "watch-webhook").send_keys("http://127.0.0.1:9/hook")  # no alert is raised here
    d.find_element(By.CSS_SELECTOR, "#watch-form button[type=submit]").click()
    wait(d, lambda: "someone opens the shop" in d.find_element(By.ID, "watch-list").text)
    assert not d.find_element(By.ID, "watch-error").is_displayed()
    assert len(d.find_element(By.CSS_SELECTOR, "#watch-secret .secret-value").text) >= 16  # shown once
    mine = next(w for w in call(base, "/v1/watches", KEY_ALL)["watches"] if w["query"] == "someone opens the shop")
    assert (mine["kind"], mine["then"], mine["within_s"], mine["stream_ids"]) == ("order", "<b>a van</b> drives in", 600, ["cam"])
    row = d.find_element(By.CSS_SELECTOR, f".watch[data-watch-id='{mine['id']}']")
    assert "then “<b>a van</b> drives in” · within 10 min · webhook · cam" in row.text
    shoot(d, "desktop-watches", tmp_path)
    row.find_element(By.CSS_SELECTOR, ".watch-remove").click()
    wait(d, lambda: d.switch_to.alert).accept()
    wait(d, lambda: not d.find_elements(By.CSS_SELECTOR, f".watch[data-watch-id='{mine['id']}']"))
    assert "the train to Oxford" in d.find_element(By.ID, "watch-list").text
    assert all(w["id"] != mine["id"] for w in call(base, "/v1/watches", KEY_ALL)["watches"])
    # recall: a described moment as a card with its confidence and facet scores; a click plays it
    tab(d, "recall")
    d.find_element(By.ID, "recall-description").send_keys("someone put three green apples in a blue bowl")
    d.find_element(By.CSS_SELECTOR, "#recall-form button[type=submit]").click()
    wait(d, lambda: d.find_elements(By.CSS_SELECTOR, "#recall-results .moment")
         or d.find_element(By.ID, "recall-status").text.startswith(("Recall failed", "Nothing")), timeout=60)
    cards = d.find_elements(By.CSS_SELECTOR, "#recall-results .moment")
    assert cards, d.find_element(By.ID, "recall-status").text
    first = cards[0]
    assert first.get_attribute("data-stream-id") == "cam" and "%" in first.text and "at 0:" in first.text
    assert first.find_elements(By.CSS_SELECTOR, ".bar[aria-label=confidence]")
    shoot(d, "desktop-recall", tmp_path)
    seg_id = first.get_attribute("data-segment-id")
    first.click()
    wait(d, lambda: js(d, "const v = document.getElementById('player');"
                          "return v.dataset.segmentId === arguments[0] && !!v.src", seg_id))
    # both views fit a phone
    d.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {"width": 375, "height": 812, "deviceScaleFactor": 2, "mobile": True})
    try:
        for name in ("recall", "alerts"):
            tab(d, name)
            scroll, inner = js(d, "return [document.documentElement.scrollWidth, window.innerWidth]")
            assert inner == 375 and scroll <= inner, (name, scroll, inner)
            js(d, f"document.getElementById('panel-{name}').scrollIntoView()")
            shoot(d, f"phone-{name}", tmp_path)
    finally:
        d.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})
    no_script_errors(d)
