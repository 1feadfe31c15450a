"""A lesson in a room, in a real browser at a projector's, a wide projector's and a phone's
size: the first screen holds the lesson (on a projector its Commit too), no formula is
cut, results mode keeps the navigation, a lesson's link lands on its place and Back returns
in one press, and nothing is cut or covered.
Screenshots (``--screenshots``) in artifacts/e2e/room/."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from tests.e2e.browser import (
    address_holds,
    fresh_page,
    open_in_tab,
    open_settled,
    settle,
    wait_idle,
)
from ui.i18n import translate
from ui.lessons.catalog import LESSON_IDS

pytestmark = pytest.mark.e2e

SIZES = {"projector": (1024, 768), "wide_projector": (1280, 720), "phone": (390, 844)}
# Where text can be cut or a chart covered: the narrowest projector and the phone.  The wide
# projector is wider everywhere (no stylesheet rule between 1024 and 1280 px, no size in
# viewport units), so it cuts nothing the 1024 px one does not; its lower height counts where
# a test asks what the first screen holds (the first test below).
NARROWEST = ("projector", "phone")

# Text a control cuts with "…" or hides in a scroll: scrollWidth beyond clientWidth in an
# element that clips (the select's input, a label, a button group), in the visible page.
TRUNCATED = """() => {
  const skip = '.js-plotly-plot, [data-testid="stDataFrame"], [data-testid="stCode"], '
    + '.katex-display, .katex, [data-testid="stTable"], [data-testid="stSidebarNav"], '
    + '[class*="st-key-fit_"]';  // a diagram that scrolls sideways rather than shrink
  const frames = ['stMain', 'stAppViewContainer', 'stSidebarContent', 'stSidebar',
    'stMainBlockContainer', 'stSkipToContent'];
  const out = [];
  for (const el of document.querySelectorAll('[data-testid="stAppViewContainer"] *')) {
    const s = getComputedStyle(el);
    if (s.display === 'none' || s.visibility === 'hidden' || el.clientWidth === 0) continue;
    if (s.overflowX === 'visible' && s.textOverflow !== 'ellipsis') continue;
    if (el.scrollWidth <= el.clientWidth + 1) continue;
    if (el.closest(skip) !== null || frames.includes(el.getAttribute('data-testid'))) continue;
    const box = el.getBoundingClientRect();
    if (box.right <= 0 || box.left >= window.innerWidth) continue;  // a collapsed sidebar
    const text = ((el.value || el.innerText || '') + '').trim();
    if (text) out.push(text.slice(0, 60));
  }
  return [...new Set(out)];
}"""


@pytest.fixture
def room(shared_context, screenshot, request):
    """A page at one of SIZES (a phone has a touch screen) and a screenshot helper."""
    size = request.param
    width, height = SIZES[size]
    phone = size == "phone"
    context = shared_context(
        viewport={"width": width, "height": height}, has_touch=phone, is_mobile=phone
    )
    with fresh_page(context) as page:

        def shot(name: str) -> None:
            screenshot(page, f"room/{name}_{size}.png")

        yield page, size, shot


def _on_screen(page, locator) -> bool:
    """Whether the element's top is within the first screen of the scrolled page."""
    box = locator.bounding_box()
    return box is not None and 0 <= box["y"] < page.viewport_size["height"]


def _title(lesson_id: str, lang: str) -> str:
    return f"{LESSON_IDS.index(lesson_id) + 1}. {translate(f'lessons.{lesson_id}.title', lang)}"


SIZE_IDS = list(SIZES)


@pytest.mark.parametrize("room", SIZE_IDS, indirect=True)
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_presented_lesson_opens_on_its_title_and_question_not_its_answer(room, server_url, lang):
    page, size, shot = room
    open_settled(page, server_url, "lessons", f"lang={lang}&ls_lesson=precision&present=on")
    title = page.get_by_role("heading", name=_title("precision", lang))
    assert _on_screen(page, title)
    question = page.get_by_role("heading", name=translate("lessons.predict", lang))
    if size != "phone":  # a projector: the question too, above the navigation
        assert _on_screen(page, question)
    picker = page.locator(".st-key-ls_choose")
    assert picker.bounding_box()["y"] > question.bounding_box()["y"]
    explain = translate("lessons.precision.explain", lang, square="90,000")[:30]
    assert page.get_by_text(explain).count() == 0  # the answer waits for the commit
    shot(f"lesson_precision_{lang}")
    page.locator("[data-testid='stRadio'] label").nth(2).click()
    wait_idle(page)
    page.get_by_role("button", name=translate("lessons.commit", lang)).click()
    wait_idle(page)
    expect(page.get_by_text(explain)).to_be_visible()
    said = [
        translate(f"lessons.{key}", lang, option="", chosen="")[:5] for key in ("right", "wrong")
    ]
    verdict = page.locator("[data-testid='stAlert']").filter(has_text=re.compile("|".join(said)))
    page.wait_for_timeout(600)  # the page scrolls the verdict into view (ui/landing.py)
    box, height = verdict.bounding_box(), page.viewport_size["height"]
    assert 0 <= box["y"] and box["y"] + box["height"] <= height  # the whole verdict shows
    assert _on_screen(page, page.get_by_role("button", name=translate("lessons.try_again", lang)))


# A display formula wider than its box, which KaTeX scrolls sideways (TRUNCATED skips them)
MATHS_CUT = """() => [...document.querySelectorAll('[data-testid=stMain] .katex-display')]
  .filter(e => e.scrollWidth > e.clientWidth + 1).map(e => e.textContent.slice(0, 40))"""


@pytest.mark.parametrize("room", ["projector", "wide_projector"], indirect=True)
def test_every_presented_lesson_fits_its_maths_and_its_commit(room, server_url):
    """Presenting, a lesson's idea and maths sit beside its question: no formula is cut in
    its column (a 4:3 projector's columns are the narrowest), and every lesson's Commit is
    on the first screen (stacked, it was in none at 1280 × 720; Peri-Norm's question, before
    its set-up moved to the idea, ran 36 px below a 1024 × 768 one)."""
    page, size, shot = room
    open_settled(page, server_url, "lessons", "lang=en&present=on")
    for number, lesson_id in enumerate(LESSON_IDS, 1):
        if number > 1:
            page.get_by_role("button", name="Next").click()
            settle(page)
        assert _on_screen(page, page.get_by_role("heading", name=_title(lesson_id, "en")))
        assert page.evaluate(MATHS_CUT) == [], lesson_id
        box = page.get_by_role("button", name="Commit").bounding_box()
        assert box["y"] + box["height"] <= page.viewport_size["height"], lesson_id
    shot("lesson_last_presented")


@pytest.mark.parametrize("room", NARROWEST, indirect=True)
def test_results_mode_hides_inputs_and_keeps_the_navigation(room, server_url):
    page, size, shot = room
    open_settled(page, server_url, "lessons", "lang=en&ls_lesson=cost&present=results")
    expect(page.locator(".st-key-ls_choose")).to_be_visible()
    page.get_by_role("button", name="Next").click()
    wait_idle(page)
    expect(page.get_by_role("heading", name=_title("real_models", "en"))).to_be_visible()
    shown = (("depth", "dp_section", ""), ("geometry", "ge_section", ""))
    # the dumps page: its reading's settings box, the stream's sequence and colour toggle
    # (they stayed on a projected results page; the other sections' pickers are boxed alike)
    shown += (("dumps", "du_section", ""),)
    for path, section, query in shown:
        open_in_tab(page, server_url, path, f"lang=en&present=results{query}")
        expect(page.locator(f".st-key-nav_{section}")).to_be_visible()
        visible_inputs = page.locator(
            "[data-testid='stMain'] :is([data-testid='stNumberInput'], [data-testid='stSlider'],"
            " [data-testid='stSelectbox'], [data-testid='stMultiSelect'],"
            " [data-testid='stTextArea'], [data-testid='stTextInput'],"
            " [data-testid='stCheckbox'], [data-testid='stExpander'])"
        )
        assert not [i for i in visible_inputs.all() if i.is_visible()], path + query
        shot(f"results_{path}{query.replace('&du_section=', '_')}")


@pytest.mark.parametrize("room", NARROWEST, indirect=True)
@pytest.mark.parametrize("lesson_id, answer", [("cost", "b"), ("batchnorm_sequences", "c")])
def test_a_lesson_link_lands_on_its_place_and_back_returns_in_one_press(
    room, server_url, lesson_id, answer
):
    page, size, shot = room
    query = f"lang=en&ls_lesson={lesson_id}&ls_answers={lesson_id}.{answer}"
    open_settled(page, server_url, "lessons", query)
    page.locator("[data-testid='stPageLink'] a").first.click()
    wait_idle(page, 120_000)
    page.wait_for_timeout(2500)  # the page scrolls as its charts take their height
    address_holds(page, "at=")
    scrolled = page.evaluate("document.querySelector('[data-testid=stMain]').scrollTop")
    assert scrolled > 300  # not the page's top
    shot(f"landed_{lesson_id}")
    page.go_back()
    wait_idle(page)
    address_holds(page, "/lessons", f"ls_lesson={lesson_id}")


# A chart's toolbar over its title; a legend over its axis title (boxes that intersect).
OVERLAPS = """() => {
  const hit = (a, b) => a && b && a.width && b.width && !(a.right <= b.left || b.right <= a.left
    || a.bottom <= b.top || b.bottom <= a.top);
  const seen = (e) => e && getComputedStyle(e).display !== 'none'
    && parseFloat(getComputedStyle(e).opacity) > 0 ? e.getBoundingClientRect() : null;
  const out = [];
  for (const plot of document.querySelectorAll('.js-plotly-plot')) {
    const title = plot.querySelector('.gtitle'), axis = plot.querySelector('.xtitle');

    // plotly shows its toolbar on hover; a touch screen has none, so it is always there
    const bar = plot.querySelector('.modebar-container');
    const shown = seen(bar) ? seen(bar.querySelector('.modebar')) : null;
    if (hit(shown, seen(title))) out.push('toolbar over ' + title.textContent);
    for (const item of plot.querySelectorAll('.legend .traces')) {
      if (hit(seen(item), seen(axis))) { out.push('legend over ' + axis.textContent); break; }
    }
  }
  return out;
}"""
# Columns a narrow screen stacks, further apart than 1.5 lines of the page's type (a "large"
# gap's 4rem left an empty band under the Vector Lab's closed Settings box).
STACKED_GAP = """() => {
  const rem = parseFloat(getComputedStyle(document.documentElement).fontSize);
  const out = [];
  for (const row of document.querySelectorAll('[data-testid=stMain] [data-testid=stHorizontalBlock]')) {
    const boxes = [...row.children].map(c => c.getBoundingClientRect()).filter(b => b.height);
    for (let i = 1; i < boxes.length; i++) {  // from the lowest bottom of the row above
      const gap = boxes[i].top - Math.max(...boxes.slice(0, i).map(b => b.bottom));
      if (gap > 1.5 * rem) out.push(`stacked columns ${Math.round(gap)} px apart`);
    }
  }
  return [...new Set(out)];
}"""
# A chart's title wider than its chart, cut at both ends (not on a phone presenting: that is
# no room, and its titles in the projector's type do not fit 390 px).
TITLE_CUT = """() => [...document.querySelectorAll('.js-plotly-plot')].flatMap(plot => {
  const title = plot.querySelector('.gtitle'), frame = plot.querySelector('.main-svg');
  if (!title || !frame || !title.getBoundingClientRect().width) return [];
  const t = title.getBoundingClientRect(), f = frame.getBoundingClientRect();
  return t.left < f.left - 1 || t.right > f.right + 1 ? ['title cut: ' + title.textContent] : [];
})"""
# The cut-text probe, leaving out what a closed expander holds (presenting: the Settings box)
OPEN_TRUNCATED = TRUNCATED.replace(
    "if (el.closest(skip) !== null",
    "if (el.closest('details:not([open])') !== null) continue;\n    if (el.closest(skip) !== null",
)
assert OPEN_TRUNCATED != TRUNCATED
SMALLEST_TICK = "() => Math.min(...[...document.querySelectorAll('.js-plotly-plot .xtick text, "
SMALLEST_TICK += ".js-plotly-plot .ytick text')].map(t => parseFloat(t.style.fontSize)))"

# Every view checked at the narrowest projector and the phone, in both languages, with what
# each is checked for: "cut" (no control cuts or hides its text), "room" (nothing in the open
# page cut, no toolbar or legend over a chart's title, a projector's ticks ≥ 16 px) and
# "settings" (presenting, the Settings box opened: each of these pages had a control cut).
ROOM_VIEWS = (  # (path, query, checks); "": the Vector Lab
    ("lessons", "", {"cut"}),
    ("", "", {"cut"}),
    (
        "",
        "vl_source=preset&vl_preset=massive_activation&vl_dtype=float16&vl_compute=float16",
        {"cut", "room"},
    ),
    ("axes", "", {"cut"}),
    ("axes", "ax_section=batchnorm&present=on", {"room", "settings"}),  # five pairs of charts
    ("depth", "", {"cut"}),
    ("depth", "present=on", {"room", "settings"}),
    ("models", "", {"cut", "room"}),
    ("dumps", "", {"cut", "room"}),
    ("dumps", "du_section=norms", {"cut", "room"}),  # a row of three pickers, a DyT chart
    ("dumps", "present=on", {"settings"}),
    ("kernels", "", {"cut"}),
    ("kernels", "present=on", {"settings"}),
    ("lessons", "ls_lesson=cost&ls_answers=cost.b&present=on", {"room"}),
)
OPEN_SETTINGS = """() => document.querySelectorAll('[data-testid=stMain] details:not([open]) > summary')
  .forEach(summary => summary.click())"""


def _stacked_gaps(page) -> list[str]:
    """Stacked columns too far apart, measured again a second later when any are: under the
    whole suite a phone's Vector Lab once measured 64 px while a late layout pass was due
    (never reproduced alone); a gap the page keeps is found twice."""
    if not page.evaluate(STACKED_GAP):
        return []
    page.wait_for_timeout(1_000)
    return page.evaluate(STACKED_GAP)


def _room_problems(page, size: str, path: str, query: str) -> list[str]:
    """What a room would see wrong in the open page: cut text, a toolbar or legend over a
    chart's title, small ticks on a projector, the Vector Lab's table or toolbar."""
    page.locator("[data-testid='stMain']").evaluate("m => m.scrollTo(0, 0)")
    problems = page.evaluate(OPEN_TRUNCATED) + page.evaluate(OVERLAPS)
    if size != "phone" or "present=on" not in query:
        problems += page.evaluate(TITLE_CUT)
    if "present=on" in query:
        smallest = page.evaluate(SMALLEST_TICK)
        if smallest < 16:
            problems.append(f"tick labels of {smallest} px on a projector")
    if path == "" and size != "phone":  # the precision table shows its last column
        last = page.locator("[data-testid='stTable']").first.locator("th").last
        if last.bounding_box()["x"] + last.bounding_box()["width"] > page.viewport_size["width"]:
            problems.append("the precision table's last column is off the screen")
    if path == "" and size == "phone" and page.locator(".modebar-container").first.is_visible():
        problems.append("plotly's toolbar on a phone")
    return problems


@pytest.mark.parametrize("room", NARROWEST, indirect=True)
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_nothing_in_a_room_is_cut_or_covered(room, server_url, lang):
    """Every page at a projector's and a phone's size: no control truncates its text, and
    columns stacked one above the other are no further apart than a column's elements; the
    views a room sees cut and cover nothing; an instructor who opens Settings while
    presenting sees every control whole (a section switch's label wraps, a multiselect's
    values take a second row, a menu's value fits a phone)."""
    page, size, shot = room
    found = {}
    for number, (path, query, checks) in enumerate(ROOM_VIEWS):
        go = open_settled if number == 0 else open_in_tab  # each view's layout, not a tab's start
        go(page, server_url, path, f"lang={lang}&{query}")
        variant = "_present" if "present=on" in query else "_set" if query else ""
        name = f"{path or 'vector_lab'}_{lang}{variant}"
        problems = page.evaluate(TRUNCATED) if "cut" in checks else []
        problems += _stacked_gaps(page)
        if size == "projector" and not query:  # the sidebar's controls above its fold
            controls = page.locator("[data-testid='stSidebarUserContent'] details summary")
            box = controls.first.bounding_box()
            if box is None or box["y"] + box["height"] > page.viewport_size["height"]:
                problems.append("the share box is below the sidebar's fold")
        if "room" in checks:
            problems += _room_problems(page, size, path, query)
        shot(name)
        if "settings" in checks:
            page.evaluate(OPEN_SETTINGS)
            page.wait_for_timeout(500)
            problems += [f"Settings opened: {cut}" for cut in page.evaluate(TRUNCATED)]
            shot(f"settings_{name}")
        if problems:
            found[f"{path or 'vector_lab'}?{query}"] = sorted(set(problems))
    assert not found
