"""Lecture plans: the default plan and a small one load and round-trip to links; bad plans get messages naming the
step and the field; the QR code decodes to the link it was made of."""

import io
import re
import tomllib
from pathlib import Path
from urllib.parse import parse_qsl, urlsplit

import pytest
import zxingcpp
from apptest_helpers import app_menu
from PIL import Image

from attnviz.errors import AttnvizError
from attnviz.lecture import load_plan, parse_plan, qr_png, step_link, step_query, student_link
from attnviz.lessons.transformer_map.blocks import BLOCKS
from attnviz.paths import LECTURES

ROOT = Path(__file__).resolve().parents[2]
DEFAULT_PLAN = LECTURES / "attention.toml"
THREE_STEPS = Path(__file__).with_name("three_steps.toml")
PAGES = {path: title for _, path, title in app_menu()}  # the app's navigation, read from app.py
GOOD_STEP = '[[step]]\ntitle = "A step"\npage = "/masks_lab"\n'


def decode_qr(png: bytes) -> str:
    found = zxingcpp.read_barcodes(Image.open(io.BytesIO(png)))
    assert len(found) == 1, found
    return found[0].text


SHIPPED = sorted(LECTURES.glob("*.toml"))


@pytest.mark.parametrize("path", SHIPPED, ids=[p.stem for p in SHIPPED])
def test_every_shipped_plan_names_pages_of_the_app_and_marks_every_right_answer(path):
    plan = load_plan(path, PAGES)
    assert all(s.notes for s in plan.steps), "every step has notes for the lecturer"
    assert all(s.minutes for s in plan.steps), "every step has its minutes"
    assert all(s.explain for s in plan.steps), "every step says what it shows (at Reveal and in the handout)"
    for s in plan.steps:
        if s.question:
            assert s.answer is not None and s.focus, f"{s.title}: a question has an answer and a focus"
    text = path.read_text(encoding="utf-8")
    assert "checked against Hugging Face" not in text and "\nexpected =" not in text


@pytest.mark.parametrize("path", SHIPPED, ids=[p.stem for p in SHIPPED])
def test_a_plans_stated_length_is_the_sum_of_its_steps_minutes(path):
    """The notes' "in all … of N min planned" is the sum of the steps' minutes; the description says the same N."""
    plan = load_plan(path, PAGES)
    total = sum(s.minutes for s in plan.steps)
    stated = re.search(r"(\d+) minutes", plan.description)
    assert stated and int(stated[1]) == total, (plan.description, total)


# Shipped questions whose page's figures are shown while the class answers, each with why they give nothing away
FIGURES_WHILE_ASKED = {
    ("heads_under_test", 1): "it asks what one sentence can show; the ranking on screen is the sentence the question "
                             "quotes, and the answer (no) is about evidence, not a number the figure holds",
}


def test_a_shipped_question_hides_its_figures_until_reveal_unless_they_cannot_answer_it():
    """A question asked over figures that hold its answer (Find the head's ranking names the head, a weight against
    its contribution says whether [SEP] adds much) is answered by reading, not predicting: every shipped question is
    predict-first, but the ones listed above, each with its reason."""
    shown = {(path.stem, number) for path in SHIPPED
             for number, s in enumerate(load_plan(path, PAGES).steps, 1) if s.answer is not None and not s.predict_first}
    assert shown == set(FIGURES_WHILE_ASKED), sorted(shown ^ set(FIGURES_WHILE_ASKED))


def test_a_shipped_choice_question_does_not_name_its_right_option_alone_before_reveal():
    """What the class reads before Reveal, the step's title (in the lecture bar) and its question, does not name a
    choice question's right option and none of the others: "something yellow, high up (the sun)" over the options
    the sun, the sky and the grass answered itself ("flatter or peakier?" asks)."""
    def named(option: str, text: str) -> bool:
        return re.search(rf"\b{re.escape(option.lower())}\b", text.lower()) is not None

    told = [f"{path.stem} step {number}: {s.answer.expected!r}" for path in SHIPPED
            for number, s in enumerate(load_plan(path, PAGES).steps, 1)
            if s.answer is not None and s.answer.kind == "choice"
            and named(s.answer.expected, f"{s.title} {s.question}")
            and not any(named(o, f"{s.title} {s.question}") for o in s.answer.options if o != s.answer.expected)]
    assert not told, told


def test_a_shipped_choice_questions_link_holds_no_word_of_its_right_option_alone():
    """The link is the projector's address before Reveal: al_query=sun over the options the sun, the sky and the
    grass named the answer there. A word of the right option that no other option has is not a value of the link."""
    glue = {"the", "a", "an", "of", "and", "or", "to", "in", "on", "at", "is", "it", "its", "by", "for", "with"}

    def words(text: str) -> set[str]:  # its words that say something ("the" of "the sun" and of any sentence not)
        return set(re.findall(r"[a-z0-9]+", text.lower())) - glue

    told = []
    for path in SHIPPED:
        for number, s in enumerate(load_plan(path, PAGES).steps, 1):
            if s.answer is None or s.answer.kind != "choice":
                continue
            own = words(s.answer.expected) - set().union(*(words(o) for o in s.answer.options if o != s.answer.expected))
            told += [f"{path.stem} step {number}: {key}={value}" for key, value in s.state if words(str(value)) & own]
    assert not told, told


def test_a_shipped_token_question_picks_no_cell_in_its_link():
    """A token question's link is the projector's address before Reveal: a picked cell there (sbs_key = "2: animal")
    named the answer."""
    picked = [f"{path.stem} step {number}" for path in SHIPPED
              for number, s in enumerate(load_plan(path, PAGES).steps, 1)
              if s.answer is not None and s.answer.kind == "token" and "sbs_key" in dict(s.state)]
    assert not picked, picked


def test_the_maps_links_open_no_shipped_token_questions_view():
    """The Transformer map (the default plan's first step, on every phone) links each block to its page. Its
    self-attention block opened the Explorer at layer 3, head 1 with the row of "it" and the key "animal" picked: step
    5's question answered, and its list under the map said so in words, four steps before step 5's Reveal. No block
    picks a cell, a query or a head, nor opens a token question's layer and head."""
    asked = {(s.answer.layer, head) for path in SHIPPED for s in load_plan(path, PAGES).steps
             if s.answer is not None and s.answer.kind == "token" for head in s.answer.heads}
    told = []
    for block in BLOCKS:
        state = dict(block.state)
        told += [f"{block.key}: {key}" for key in ("sbs_head", "sbs_query", "sbs_key", "fh_query") if key in state]
        if block.page == "" and (int(state.get("layer", 0)), int(state.get("focus", 0))) in asked:
            told.append(f"{block.key}: layer {state.get('layer', 0)}, head {state.get('focus', 0)}")
    assert asked and not told, told


def test_a_shipped_explorer_step_names_its_head_as_the_page_reads_it():
    """On the Explorer the enlarged head is `focus` ("Head to enlarge"); `sbs_head` is the head of a selected cell and
    selects nothing without its query and key: extended's step 3 named sbs_head = 1 alone, and the projector showed
    head 0 under an address that said head 1."""
    for path in SHIPPED:
        for number, s in enumerate(load_plan(path, PAGES).steps, 1):
            state = dict(s.state)
            if s.page == "" and "sbs_head" in state:
                assert {"sbs_query", "sbs_key"} <= set(state), f"{path.stem} step {number}: sbs_head without a cell"


def test_a_shipped_token_question_names_its_row():
    """The row the class is told about is the one the question names: layer, head and query, in the plan."""
    tokens = [(path.stem, s) for path in SHIPPED for s in load_plan(path, PAGES).steps
              if s.answer is not None and s.answer.kind == "token"]
    assert tokens, "the default plan asks a token question"
    for _, s in tokens:
        raw = tomllib.loads(path_text(s))["answer"]
        assert {"query", "layer"} <= set(raw) and ({"head"} & set(raw) or {"heads"} & set(raw)), s.title


def path_text(step) -> str:
    """The answer table of a shipped step, as written in its file (a TOML line)."""
    for path in SHIPPED:
        lines = path.read_text(encoding="utf-8").splitlines()
        for i, line in enumerate(lines):
            if line == f'title = "{step.title}"':
                return next(x for x in lines[i:] if x.startswith("answer = "))
    raise AssertionError(step.title)


def test_the_default_plan_is_a_50_minute_lecture_that_opens_and_closes_on_the_transformer_map():
    plan = load_plan(DEFAULT_PLAN, PAGES)
    assert len(plan.steps) <= 15
    assert sum(s.minutes for s in plan.steps) <= 50
    assert plan.steps[0].page == plan.steps[-1].page == "transformer_map"
    order = [s.page for s in plan.steps]
    # the course's order: why, the general layer, the mechanics, then the decoder and its cache
    assert order[1:4] == ["why_attention", "attention_layer", "attention_layer"]
    for later, earlier in (("kv_cache", "scaling_lab"), ("masks_lab", ""), ("cross_attention", "masks_lab")):
        assert order.index(later) > order.index(earlier)
    assert order.count("masks_lab") == 1, "one masks step"
    assert sum(s.predict_first for s in plan.steps) >= 4
    # the steps whose question needs a particular state: it -> animal on layer 3 head 1, GQA on tiny-llama
    who = next(s for s in plan.steps if "'it'" in s.question)
    assert (who.page, dict(who.state)["layer"], dict(who.state)["focus"]) == ("", "3", "1")  # the enlarged head
    assert (who.answer.kind, who.answer.query, who.answer.layer, who.answer.heads) == ("token", "it", 3, (1,))
    gqa = next(s for s in plan.steps if "key/value head" in s.question)
    assert dict(gqa.state)["model"] == "tiny-llama" and gqa.answer.quantity == "heads_per_kv"
    assert gqa.predict_first, "its answer is in the table beside the question: it waits for Reveal"
    assert all(s.answer for s in plan.steps if s.question and s.page != "transformer_map"), \
        "every question the class can answer has an answer kind"
    text = DEFAULT_PLAN.read_text(encoding="utf-8")
    assert "learned projection" not in text and "checked against Hugging Face" not in text


def test_a_plan_round_trips_through_its_links():
    plan = load_plan(THREE_STEPS, PAGES)
    assert plan.title == "Three steps" and len(plan.steps) == 3
    step = plan.step(3)
    assert (step.page, step.predict_first, step.question) == ("step_by_step", False, "Which key will 'dog' weigh most?")
    link = step_link(step, lecture="three_steps", number=3, room="AB2C")
    parts = urlsplit(link)
    assert parts.path == "./step_by_step"
    assert parse_qsl(parts.query) == [("model", "toy"), ("text", "A dog ran home."), ("sbs_head", "1"),
                                      ("present", "1"), ("fig", "pair"), ("lecture", "three_steps"), ("step", "3"),
                                      ("room", "AB2C")]
    assert step_link(plan.step(1), present=False).startswith("./masks_lab?mask=causal&text=")
    # the explorer is the default page: its link is the app's root
    explorer = parse_plan('title = "t"\n[[step]]\ntitle = "x"\npage = "/"\nstate = { layer = 2 }\n', PAGES).step(1)
    assert step_link(explorer, present=False) == "./?layer=2"
    assert plan.step(0) == plan.step(1) and plan.step(99) == plan.step(3)  # clamped, as the links count


def test_state_values_take_their_url_spelling():
    plan = parse_plan('title = "t"\n[[step]]\ntitle = "x"\npage = "/"\n'
                      'state = { scaled = false, factor = 0.5, heads = [0, 3], text = "Ünïcode & more" }\n', PAGES)
    assert plan.step(1).state == (("scaled", "false"), ("factor", "0.5"), ("heads", "0"), ("heads", "3"),
                                  ("text", "Ünïcode & more"))
    assert step_query(plan.step(1), present=False)[-1] == ("text", "Ünïcode & more")


def test_the_students_link_leaves_out_the_lecture_and_presentation_mode():
    query = [("text", "a b"), ("present", "1"), ("lecture", "attention"), ("step", "4"), ("room", "K7QF"),
             ("heads", "0"), ("heads", "2")]
    assert student_link("http://10.0.0.5:8501/step_by_step", query) == \
        "http://10.0.0.5:8501/step_by_step?text=a+b&heads=0&heads=2"
    assert student_link("http://h/", [("present", "1")]) == "http://h/"


@pytest.mark.parametrize("link", ["http://127.0.0.1:8501/step_by_step?model=toy&text=A+dog+ran+home.&sbs_head=1",
                                  "https://class.example.org/attnviz/?text=" + "%C3%9Cber+den+Wolken+" * 20])
def test_the_qr_code_decodes_to_its_link(link):
    png = qr_png(link)
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    assert decode_qr(png) == link


def problem(text: str) -> str:
    with pytest.raises(AttnvizError) as err:
        parse_plan(text, PAGES)
    return str(err.value)


@pytest.mark.parametrize("text, says", [
    ('title = "t"\n' + GOOD_STEP + '[[step]]\ntitle = "Mystery"\npage = "/nowhere"\n',
     ['Step 2 ("Mystery"): page "/nowhere" is not a page of this app', "/masks_lab", "/step_by_step"]),
    ('title = "t"\n[[step]]\npage = "/masks_lab"\n', ["Step 1 has no title"]),
    ('title = "t"\n' + GOOD_STEP + '[[step]]\ntitle = "   "\npage = "/"\n', ["Step 2 has no title"]),
    ('title = "t"\n[[step]]\ntitle = "x"\n', ['Step 1 ("x") has no page', "/step_by_step"]),
    ('title = "t"\n[[step]]\ntitle = "x"\npage = 3\n', ['Step 1 ("x") has no page']),
    ('title = "t"\n[[step]]\ntitle = "x"\npage = "/"\nstate = "text=hi"\n', ['Step 1 ("x"): state must be a table',
                                                                          "not text"]),
    ('title = "t"\n[[step]]\ntitle = "x"\npage = "/"\nstate = { text = { a = 1 } }\n',
     ['Step 1 ("x"): state.text must be text, a number, true/false or a list of them, not a table']),
    ('title = "t"\n[[step]]\ntitle = "x"\npage = "/"\nstate = { present = 1 }\n',
     ['state key "present" is set by the lecture itself']),
    ('title = "t"\n[[step]]\ntitle = "x"\npage = "/"\nstate = { "a b" = 1 }\n', ['state key "a b" is not a URL']),
    ('title = "t"\n[[step]]\ntitle = "x"\npage = "/"\nnote = "typo"\n',
     ['Step 1 ("x") has unknown field note', "notes"]),
    ('title = "t"\n[[step]]\ntitle = "x"\npage = "/"\nnotes = 3\n', ['Step 1 ("x"): notes must be text']),
    ('title = "t"\n[[step]]\ntitle = "x"\npage = "/"\npredict_first = "yes"\n',
     ['Step 1 ("x"): predict_first must be true or false, not text']),
    ('title = "t"\n[[step]]\ntitle = "x"\npage = "/"\npredict_first = true\n',
     ['Step 1 ("x"): predict_first = true needs a question']),
    ('title = "t"\n' + GOOD_STEP + 'title = "again"\n', ["not valid TOML"]),  # a key defined twice
    ('title = "t"\n' + GOOD_STEP + 'description = "after the steps"\n',  # a top-level key below a [[step]]
     ['Step 1 ("A step") has unknown field description', "title, page, state"]),
    ('title = "t"\n[[step]\ntitle = "x"\n', ["not valid TOML", "line 2"]),
    ('title = "t"\n', ["has no steps"]),
    ('title = "t"\nsteps = []\n' + GOOD_STEP, ["unknown top-level keys: steps"]),
    (GOOD_STEP, ["needs a title"]),
    ('title = "t"\nstep = [1, 2]\n', ["Step 1 is not a table"]),
])
def test_a_bad_plan_gets_a_message_naming_the_step_and_the_field(text, says):
    message = problem(text)
    for part in says:
        assert part in message, message
    assert "Traceback" not in message


def test_a_file_that_is_not_a_plan_is_refused_clearly():
    assert "at most 200,000" in problem("#" * 200_001)
    with pytest.raises(AttnvizError, match="not UTF-8"):
        parse_plan(b"\xff\xfe\x00t", PAGES)
    with pytest.raises(AttnvizError, match="Cannot read the lecture plan"):
        load_plan(ROOT / "no-such-plan.toml", PAGES)


def test_the_step_fields_are_read_and_checked():
    """explain, minutes, focus and answer: read into the step, and each wrong value named with its step."""
    head = 'title = "t"\n[[step]]\ntitle = "a"\npage = "/"\nquestion = "Who?"\n'
    step = parse_plan((head + 'explain = "Because."\nminutes = 3\nfocus = "head"\n'
                       'answer = { kind = "choice", options = ["x", "y"], expected = "y" }\n').encode(),
                      {"": "Explorer"}).steps[0]
    assert (step.explain, step.minutes, step.focus) == ("Because.", 3.0, "head")
    assert (step.answer.kind, step.answer.options, step.answer.expected) == ("choice", ("x", "y"), "y")
    answer = 'answer = { kind = "number", expected = 1 }\n'
    for bad, said in [("minutes = 0\nfocus = \"head\"\n" + answer, "minutes"),
                      ('focus = "a b"\n' + answer, "focus"),
                      ('focus = "head"\nanswer = { kind = "x" }', "answer.kind"),
                      ('focus = "head"\nanswer = { kind = "choice", options = ["x"], expected = "x" }', "options"),
                      ('focus = "head"\nanswer = { kind = "number", query = "it", expected = 1 }', "answer.query"),
                      ('focus = "head"\n', "a question needs an answer table"),
                      (answer, "a question names the figure that answers it: focus"),
                      ('focus = "head"\nexpected = "y"\n' + answer, "expected belongs in the answer table"),
                      ('focus = "head"\nexplain = 3\n' + answer, "explain must be text")]:
        with pytest.raises(AttnvizError, match=said) as err:
            parse_plan((head + bad + "\n").encode(), {"": "Explorer"})
        assert str(err.value).startswith('Step 1 ("a")'), err.value
