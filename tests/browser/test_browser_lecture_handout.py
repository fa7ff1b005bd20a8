"""The lecture's handout printed to PDF by Chromium (what Print → Save as PDF makes): its pages hold every step's
title, every question's right answer, each step's explanation and the summary, and leave out the on-screen viewer;
on screen, the viewer opens each step at its own layer (the default plan's step 5 at layer 3, not layer 0)."""

import html
import re
import unicodedata

import pypdf
import pytest
from apptest_helpers import run_app
from browser_helpers import ROOT, chromium_page

from ui.lecture.plans import plan_by_id
from ui.lecture.room_record import room_record
from ui.lecture.step_state import right_answer
from ui.lecture.store import lecture_store

ARTIFACTS = ROOT / "test-artifacts"  # for a person to look at


def flat(text: str) -> str:
    """Text with its line breaks as spaces (a word broken after its hyphen joined again), and the PDF's ligatures
    (ﬁ) as letters."""
    return re.sub(r"-\s+", "-", " ".join(unicodedata.normalize("NFKC", text).split()))


@pytest.fixture(scope="module")
def handout(tmp_path_factory):
    """The default plan's handout after a lecture: answers on three steps, two of them revealed."""
    run_app({}, page="app_pages/lecture.py")  # the app's menu, which a plan's pages are checked against
    store = lecture_store()
    code, key = store.create_room("attention")
    for number, answers in ((2, ["with attention", "neither"]), (5, ["2", "0", "2"]), (9, ["512", "30"])):
        store.go_to(code, key, number)
        for i, value in enumerate(answers):
            store.answer(code, number, f"student{i:02d}{'x' * 12}", value)
    store.reveal(code, key, 2)
    store.reveal(code, key, 5)
    path = tmp_path_factory.mktemp("handout") / "lecture.html"
    path.write_text(room_record(code, key), encoding="utf-8")
    return path


def test_the_printed_handout_has_every_step_its_right_answer_and_a_summary(handout):
    plan = plan_by_id("attention")
    pdf = handout.with_suffix(".pdf")
    with chromium_page(1100, 900) as page:
        page.goto(handout.as_uri())
        page.wait_for_function("() => document.querySelector('.avr') !== null")
        page.pdf(path=str(pdf), format="A4", print_background=True)
    ARTIFACTS.mkdir(exist_ok=True)
    (ARTIFACTS / "lecture-handout.pdf").write_bytes(pdf.read_bytes())
    reader = pypdf.PdfReader(str(pdf))
    assert 8 <= len(reader.pages) <= 30, len(reader.pages)
    pages = [flat(p.extract_text()) for p in reader.pages]
    text = " ".join(pages)
    assert pages[0].startswith(plan.title)
    for number, step in enumerate(plan.steps, start=1):
        assert flat(f"Step {number}: {step.title}") in text, step.title
        assert flat(step.explain)[:60] in text, f"step {number}'s explanation"
        if step.answer is not None:
            assert flat(f"The right answer: {right_answer(step).text}") in text, f"step {number}'s right answer"
    assert "'animal' (token 2), weight 0.68" in text and "animal ✓ right answer 2" in text
    assert "Summary: what we covered" in pages[-1] or "Summary: what we covered" in pages[-2]
    assert "The questions, and how the class answered" in text
    assert "The model's attention, step by step" not in text, "the on-screen viewer is left out of the print"


def test_on_screen_each_step_of_the_viewer_opens_at_its_layer(handout):
    plan = plan_by_id("attention")
    with chromium_page(1100, 900) as page:
        page.goto(handout.as_uri())
        picker = page.locator("label.avv-pick", has_text="Attention").locator("select")
        picker.wait_for()
        names = [flat(o) for o in picker.locator("option").all_inner_texts()]
        step5 = next(n for n in names if n.startswith("Step 5:"))
        assert step5 == f"Step 5: {plan.step(5).title}"
        picker.select_option(label=step5)
        layer = page.locator('select[data-role="layer"]')
        assert layer.evaluate("s => s.options[s.selectedIndex].text") == "3"
        page.locator("#attnviz-root").screenshot(path=str(ARTIFACTS / "lecture-handout-viewer.png"))
    body = html.unescape(re.sub(r"<[^>]+>", " ", handout.read_text(encoding="utf-8")))
    assert "http://" not in handout.read_text(encoding="utf-8").replace("http://www.w3.org/2000/svg", "")
    assert "Step 5: Self-attention in a real model" in body
