"""A class end to end in real Chromium: an instructor starts a class, four learners join from
the join link (English and Chinese, laptop and phone), commit predictions, vote again in a
second round, see the answer when it is revealed, follow "everyone to lesson N"; the
instructor's chart follows without a click, the CSV holds both rounds, a forged key and a
wrong code are refused.  Screenshots (``--screenshots``) in artifacts/e2e/class_mode/.

The server is this module's own, on an empty class database in a temporary directory (the
store's limits count per address, and every browser here is 127.0.0.1).
"""

from __future__ import annotations

import csv
import io
import re
from urllib.parse import parse_qs, urlsplit

import pytest
from playwright.sync_api import expect

from classroom.rules import shown_code
from scripts.local_app import free_port, start_server, wait_healthy
from tests.e2e.browser import SLOW_MS, new_context
from ui.i18n import translate
from ui.lessons.catalog import LESSON_IDS, lesson

pytestmark = pytest.mark.e2e

# Without a click: the page updates on its own (how fast is measured in benchmarks/, not here:
# this machine is shared); every ``expect`` waits as long (tests/e2e/conftest.py).
FIRST = LESSON_IDS[0]
ANSWER = lesson(FIRST).answer
LEARNERS = (  # (locale, viewport, round-1 option, round-2 option)
    ("en-US", (1280, 900), "a", ANSWER),
    ("en-US", (1280, 900), ANSWER, ANSWER),
    ("zh-CN", (390, 844), "c", ANSWER),
    ("zh-CN", (1024, 768), "a", "d"),
)


@pytest.fixture(scope="module")
def class_server(tmp_path_factory):
    import os

    data = tmp_path_factory.mktemp("class_data")
    previous = os.environ.get("NORMSCOPE_DATA_DIR")
    os.environ["NORMSCOPE_DATA_DIR"] = str(data)
    port = free_port()
    process = start_server(port)
    url = f"http://127.0.0.1:{port}"
    try:
        wait_healthy(url, process)
        yield url
    finally:
        process.terminate()
        process.wait(10)
        if previous is None:
            os.environ.pop("NORMSCOPE_DATA_DIR", None)
        else:
            os.environ["NORMSCOPE_DATA_DIR"] = previous


@pytest.fixture
def tab(browser):
    contexts = []

    def open_(url: str, locale: str = "en-US", size=(1024, 768), ready: str = "h1, h2"):
        context = new_context(
            browser,
            viewport={"width": size[0], "height": size[1]},
            locale=locale,
            accept_downloads=True,
        )
        contexts.append(context)
        page = context.new_page()
        page.goto(url, timeout=120_000, wait_until="commit")
        page.locator(ready).first.wait_for()  # not wait_idle: a class page polls all along
        return page

    yield open_
    for context in contexts:
        context.close()


def _verdict(key: str, lang: str) -> str:
    """How a verdict ("right" or "wrong") begins in ``lang``."""
    return translate(f"lessons.{key}", lang, option="", chosen="")[:3]


def counts_line(page):
    """The instructor's line of counts (joined, answered per round)."""
    return page.locator(".st-key-cl_counts").last


def commit(page, lesson_id: str, option: str) -> None:
    """Pick ``option`` and commit it, once the question takes an answer."""
    # .last: while a rerun draws, Streamlit may still show the previous run's element
    group = page.locator(f".st-key-ls_pick_{lesson_id}").last
    choice = group.get_by_role("radio").nth("abcd".index(option))
    expect(choice).to_be_enabled()
    button = page.locator(f".st-key-ls_commit_{lesson_id} button:visible").last
    for _ in range(5):  # a click that lands while the class's rerun redraws the radio is lost
        label = group.locator("label").filter(has=page.get_by_role("radio"))
        label.nth("abcd".index(option)).click()
        try:
            expect(button).to_be_enabled(timeout=8_000)
            break
        except AssertionError:
            continue
    button.click()
    expect(choice).to_be_disabled()  # committed: the answers are locked


def instructor_link(teacher) -> tuple[str, str]:
    """The class's code and key, from the instructor link in its private box (the page's
    address never holds the key)."""
    teacher.wait_for_url(re.compile("cl_code="))
    teacher.get_by_text("Your instructor link (private)").click()
    link = teacher.locator("[data-testid='stExpander'] code").filter(has_text="cl_key=")
    query = parse_qs(urlsplit(link.inner_text().strip()).query)
    return query["cl_code"][0], query["cl_key"][0]


def test_a_class_from_start_to_csv(class_server, tab, screenshot):
    teacher = tab(f"{class_server}/classroom?lang=en")
    teacher.get_by_role("button", name="Start a class").click()
    expect(teacher.locator(".st-key-cl_join")).to_be_visible()
    code, key = instructor_link(teacher)
    expect(teacher.get_by_text(shown_code(code))).to_be_visible()
    assert "cl_key" not in teacher.url  # a projected address bar never shows the key
    teacher.reload()  # the browser kept the key: still the instructor's page
    expect(teacher.get_by_role("button", name="Reveal the answer")).to_be_visible()
    expect(teacher.get_by_role("img").first).to_be_visible()  # the QR code
    assert key not in teacher.locator(".st-key-cl_join").inner_text()  # not on the projector

    join = f"{class_server}/lessons?ls_class={code}"
    learners = [tab(join, locale, size) for locale, size, *_ in LEARNERS]
    expect(learners[2].get_by_text(f"课堂 {shown_code(code)}")).to_be_visible()
    # a phone in a class: the question on the first screen (it was two screens down)
    question = translate(f"lessons.{FIRST}.question", "zh", **lesson(FIRST).texts())
    assert learners[2].get_by_text(question[:20]).bounding_box()["y"] < LEARNERS[2][1][1]
    expect(counts_line(teacher)).to_contain_text("4 joined")

    for page, (*_, first, _second) in zip(learners, LEARNERS, strict=True):
        commit(page, FIRST, first)
    expect(counts_line(teacher)).to_contain_text("4 answered")
    for page in learners:  # paced: counted, the answer not shown before the reveal
        expect(page.locator("[data-testid='stAlert']").filter(has_text="✓")).to_have_count(0)
        marks = page.locator(f".st-key-ls_pick_{FIRST} [role='img']")
        expect(marks).to_have_count(0)  # no option marked right or wrong

    teacher.get_by_role("button", name="Second round").click()
    expect(teacher.get_by_role("button", name="Second round")).to_be_disabled()
    for page, (*_, second) in zip(learners, LEARNERS, strict=True):
        commit(page, FIRST, second)  # unlocked by the second round, without a reload
    expect(counts_line(teacher)).to_contain_text("4 in round 1, 4 in round 2")
    # .first: while plotly redraws the chart, its legend can hold the entry twice for a moment
    expect(teacher.locator(".js-plotly-plot").get_by_text("Round 2").first).to_be_visible()

    teacher.get_by_role("button", name="Reveal the answer").click()
    expect(teacher.get_by_role("button", name="Reveal the answer")).to_have_count(0)
    verdicts = [_verdict(key, lang) for key in ("right", "wrong") for lang in ("en", "zh")]
    for page in learners:
        verdict = page.locator("[data-testid='stAlert']").filter(
            has_text=re.compile("|".join(verdicts))
        )
        expect(verdict.first).to_be_visible(timeout=SLOW_MS)
    expect(
        learners[0].locator("[data-testid='stAlert']").filter(has_text=_verdict("right", "en"))
    ).to_be_visible()
    expect(
        learners[3].locator("[data-testid='stAlert']").filter(has_text=_verdict("wrong", "zh"))
    ).to_be_visible()
    # the options' marks are Streamlit's icons (the ✓ / ✗ characters fell back to another font)
    marks = [page.locator(f".st-key-ls_pick_{FIRST} [role='img']") for page in learners]
    expect(marks[0]).to_have_count(1)  # right: the answer's mark only
    expect(marks[3]).to_have_count(2)  # wrong: the answer's and the pick's

    with teacher.expect_download() as download:
        teacher.get_by_role("button", name="Counts as CSV").click()
    rows = list(csv.DictReader(io.StringIO(download.value.path().read_text())))
    counts = {(r["round"], r["option"]): int(r["votes"]) for r in rows if r["lesson"] == FIRST}
    for round_, index in (("1", 2), ("2", 3)):
        for option in "abcd":
            expected = sum(1 for learner in LEARNERS if learner[index] == option)
            assert counts[(round_, option)] == expected, (round_, option)
    title, answer = translate(f"lessons.{FIRST}.title", "en"), lesson(FIRST).answer
    ours = [(r["title"], r["right"], r["option"]) for r in rows if r["lesson"] == FIRST]
    assert ours and all(t == title and (r == "yes") == (o == answer) for t, r, o in ours)

    presented = f"{teacher.url}&present=on"
    for width, height in ((1024, 768), (1280, 720)):
        teacher.set_viewport_size({"width": width, "height": height})
        teacher.goto(presented)
        expect(teacher.locator(".js-plotly-plot")).to_be_visible()
        teacher.wait_for_timeout(1500)
        screenshot(teacher, f"class_mode/instructor_present_{width}x{height}.png")
        # one screen holds the QR code beside the question and its whole live chart, as a
        # room sees it (the chart's last answer was 170 px below a 720 px screen), and the
        # instructor's buttons beside the class's code (they were in a closed box below it)
        qr = teacher.locator(".st-key-cl_join img").bounding_box()
        chart = teacher.locator(".js-plotly-plot").first.bounding_box()
        assert qr["x"] + qr["width"] <= chart["x"] and qr["y"] < height
        assert chart["y"] + chart["height"] <= height, (width, chart)
        actions = teacher.locator(".st-key-cl_actions")  # revealed: the next step only
        expect(actions.get_by_role("button")).to_have_count(1)
        expect(actions.get_by_role("button", name="Next: everyone to lesson 2")).to_be_visible()
        title = teacher.get_by_role("heading", name=f"Class {shown_code(code)}").bounding_box()
        for button in actions.get_by_role("button").all():  # within the screen, whole
            box = button.bounding_box()
            assert box["x"] + box["width"] <= width and box["y"] + box["height"] <= height
        # beside the code: the buttons' row (one or two lines) ends level with its heading
        row = actions.bounding_box()
        assert row["x"] >= title["x"] + title["width"] and row["y"] < title["y"] + title["height"]
    screenshot(learners[2], "class_mode/learner_zh_390.png", full_page=True)

    teacher.get_by_role("button", name="Next: everyone to lesson 2").click()
    expect(teacher.get_by_role("button", name="Everyone to lesson 2")).to_be_visible()
    for page in learners:
        expect(page.get_by_role("heading", name=re.compile(r"^2\. "))).to_be_visible(
            timeout=SLOW_MS
        )


def test_a_forged_key_and_a_wrong_code_are_refused(class_server, tab):
    forged = tab(f"{class_server}/classroom?lang=en&cl_code=ABCDEF&cl_key=forged")
    expect(forged.get_by_text("has this instructor’s key", exact=False)).to_be_visible()
    expect(forged.get_by_role("button", name="Reveal the answer")).to_have_count(0)
    learner = tab(f"{class_server}/lessons?lang=en&ls_class=not-a-code")
    expect(learner.get_by_text("is not a class code")).to_be_visible()
    commit(learner, FIRST, ANSWER)  # the lessons go on without the class
    expect(learner.locator("[data-testid='stAlert']").filter(has_text="Right")).to_be_visible()


def test_a_join_link_opened_twice_at_once_in_one_browser_is_one_learner(class_server, browser, tab):
    """A double tap or a QR code scanned twice: two pages of one browser open the join link
    before either has drawn (and so before the class's cookie could come from a drawn page).
    The browser makes its token before joining, so the class counts one learner; another
    browser at the same address (a class shares one) is a second."""
    from classroom.store import open_store
    from ui.lessons.catalog import ANSWER_IDS

    teacher = tab(f"{class_server}/classroom?lang=en")
    teacher.get_by_role("button", name="Start a class").click()
    code, key = instructor_link(teacher)
    join = f"{class_server}/lessons?lang=en&ls_class={code}"
    context = new_context(browser)
    try:
        pages = [context.new_page() for _ in range(2)]
        for page in pages:
            page.goto(join, timeout=120_000, wait_until="commit")
        for page in pages:
            expect(page.get_by_text(f"Class {shown_code(code)}:")).to_be_visible()
        room = open_store(ANSWER_IDS)  # the server's database (class_server's folder)
        assert room.room(code, key, FIRST).joined == 1
        other = tab(join)  # another browser in the room
        expect(other.get_by_text(f"Class {shown_code(code)}:")).to_be_visible()
        assert room.room(code, key, FIRST).joined == 2
        expect(counts_line(teacher)).to_contain_text("2 joined")
        # A class served over plain http on the room's network has no Web Locks and no Cookie
        # Store: here both pages read the cookie before the other's write reached them
        plain = new_context(browser)
        plain.add_init_script(_NO_LOCK_STALE_COOKIE)
        pages = [plain.new_page() for _ in range(2)]
        for page in pages:
            page.goto(join, timeout=120_000, wait_until="commit")
        for page in pages:
            expect(page.get_by_text(f"Class {shown_code(code)}:")).to_be_visible()
        assert room.room(code, key, FIRST).joined == 3  # the two pages settled on one token
        plain.close()
    finally:
        context.close()


# An insecure context (http on a LAN address): no navigator.locks, no cookieStore; and a
# class cookie another page wrote less than 150 ms ago is not yet seen by a page that has
# written none (a write reaching another renderer late, here far later than a browser's own
# milliseconds): the race the join's settling read (``SETTLE_MS``) is for.
_NO_LOCK_STALE_COOKIE = """
Object.defineProperty(Navigator.prototype, 'locks', {get: () => undefined, configurable: true});
Object.defineProperty(window, 'cookieStore', {value: undefined, configurable: true});
(() => {
  const cookie = Object.getOwnPropertyDescriptor(Document.prototype, 'cookie');
  let wrote = false;
  Object.defineProperty(Document.prototype, 'cookie', {
    configurable: true,
    get() {
      const all = cookie.get.call(this);
      const last = Number(localStorage.getItem('class_cookie_written') || 0);
      if (wrote || Date.now() - last >= 150) return all;
      return all.split('; ').filter((c) => !c.startsWith('normscope_class_')).join('; ');
    },
    set(value) {
      if (String(value).startsWith('normscope_class_')) {
        wrote = true;
        localStorage.setItem('class_cookie_written', String(Date.now()));
      }
      cookie.set.call(this, value);
    },
  });
})();
"""
