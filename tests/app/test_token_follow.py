"""Token pickers keep the token, not the position, when the text changes (ui.token_link.follow_token, the
explorer's selection): Find the head, Step by step, the encoder layer, Query–key space's row, the explorer."""

import os

os.environ["HF_HUB_OFFLINE"] = "1"

from apptest_helpers import assert_healthy, page_text, run_app
from streamlit.proto.WidgetStates_pb2 import WidgetState

from attnviz.analysis.head_search import same_token_position
from attnviz.lessons.explorer.selection import Selection, follow_selection

ANIMAL = "The animal didn't cross the street because it was too tired."
TROPHY = "The trophy didn't fit in the suitcase because it was too big."
# MiniLM's tokens: [CLS] the animal didn ' t cross the street because it was too tired . [SEP]
#                  [CLS] the trophy didn ' t fit in the suitcase because it was too big . [SEP]


def test_same_token_position_keeps_the_occurrence():
    old = ["[CLS]", "the", "cat", "saw", "the", "dog", "[SEP]"]
    new = ["[CLS]", "a", "the", "big", "the", "dog", "the", "[SEP]"]
    assert same_token_position(old, 1, new) == 2  # the first "the" stays the first
    assert same_token_position(old, 4, new) == 4  # the second stays the second
    assert same_token_position(old, 5, new) == 5
    assert same_token_position(old, 2, new) is None  # no "cat" any more
    assert same_token_position(["A", "b"], 0, ["x", "a"]) == 1  # without case when it is not there as written
    assert same_token_position(["x", "the", "the", "the"], 3, ["the", "y"]) == 0  # fewer occurrences: the first


def test_follow_selection_moves_both_tokens_or_says_which_went():
    old, new = ["[CLS]", "it", "was", "tired", "[SEP]"], ["[CLS]", "so", "it", "was", "big", "[SEP]"]
    assert follow_selection(Selection(3, 1, 2), old, new) == (Selection(3, 2, 3), None)
    sel, said = follow_selection(Selection(3, 1, 3), old, new)
    assert sel is None and "key token “tired” (3)" in said and "query" not in said.split("key")[0].replace("selected", "")
    assert follow_selection(Selection(0, 1, 2), old, old) == (Selection(0, 1, 2), None)


def picked(at, key: str) -> str:
    """The picker's own spelling of its value, as the browser shows it."""
    box = at.selectbox(key=key)
    return box.format_func(box.value)


def test_find_the_head_keeps_it_and_says_animal_went():
    at = run_app({"text": ANIMAL}, page="app_pages/find_head.py")
    assert_healthy(at)
    assert (picked(at, "fh_query"), picked(at, "fh_key")) == ("it (10)", "animal (2)")
    at.text_area(key="text").set_value(TROPHY).run()
    assert_healthy(at)
    assert (picked(at, "fh_query"), picked(at, "fh_key")) == ("it (11)", "trophy (2)")
    said = page_text(at)
    assert "“animal” (2) is not in the new text" in said
    assert r"query it \(11\)" in said and r"key trophy \(2\)" in said  # the ranking's sentence names the same pair
    assert at.query_params["fh_query"] == "11" and at.query_params["fh_key"] == "2"


def test_find_the_head_keeps_a_picked_pair_present_in_both_texts():
    at = run_app({"text": ANIMAL, "fh_query": "9", "fh_key": "8"}, page="app_pages/find_head.py")  # because → street
    at.text_area(key="text").set_value("Because of the street, the street was closed.").run()
    assert_healthy(at)
    assert (picked(at, "fh_query"), picked(at, "fh_key")) == ("because (1)", "street (4)")
    assert "not in the new text" not in page_text(at)


def test_a_new_link_names_a_token_of_its_own_text():
    """A lecture step's link: its position is of its own text, not followed from an earlier one."""
    at = run_app({"text": TROPHY, "fh_query": "10", "fh_key": "2"}, page="app_pages/find_head.py")
    assert (picked(at, "fh_query"), picked(at, "fh_key")) == ("because (10)", "trophy (2)")


def test_step_by_step_keeps_its_pair_by_token():
    at = run_app({"text": ANIMAL, "sbs_query": "10: it", "sbs_key": "2: animal"}, page="app_pages/step_by_step.py")
    assert_healthy(at)
    assert (picked(at, "sbs_query"), picked(at, "sbs_key")) == ("10: it", "2: animal")
    at.text_area(key="text").set_value(TROPHY).run()
    assert_healthy(at)
    assert picked(at, "sbs_query") == "11: it"
    assert picked(at, "sbs_key") == "1: the"  # the default key, 1, and the page says which token went
    assert "“animal” (2) is not in the new text" in page_text(at)
    assert any("q" in m.value and "11" in m.value for m in at.latex)  # the arithmetic is of query 11


def test_the_encoder_layers_token_follows():
    at = run_app({"text": ANIMAL, "enc_token": "10: it"}, page="app_pages/encoder_layer.py")
    assert picked(at, "enc_token") == "10: it"
    at.text_area(key="text").set_value(TROPHY).run()
    assert_healthy(at)
    assert picked(at, "enc_token") == "11: it"


def test_query_key_spaces_row_follows():
    at = run_app({"text": ANIMAL, "qk_row": "10"}, page="app_pages/qk_space.py")
    assert picked(at, "qk_row") == "it (10)"
    at.text_area(key="text").set_value(TROPHY).run()
    assert_healthy(at)
    assert picked(at, "qk_row") == "it (11)"
    assert any("Row of query it (11)" in m.value for m in at.markdown)


def test_the_explorers_selection_follows_its_tokens():
    at = run_app({"text": ANIMAL, "sbs_head": "1", "sbs_query": "10: it", "sbs_key": "2: animal"})
    assert_healthy(at)
    at.text_area(key="text").set_value("It was an animal.").run()  # [CLS] it was an animal . [SEP]
    assert_healthy(at)
    assert at.session_state["why_sel"] == Selection(1, 1, 4)
    assert at.query_params["sbs_query"] == "1: it" and at.query_params["sbs_key"] == "4: animal"
    at.text_area(key="text").set_value(TROPHY).run()
    assert at.session_state["why_sel"] is None
    assert "“animal” (4) is not in the new text" in page_text(at)


def send_late(at, key: str, option_name: str) -> None:
    """Make the next run carry, for the picker under `key`, the option name a browser that had not yet received the
    last run still shows (the old text's 'it (10)'), as a real browser does with a quick second change."""
    box = at.selectbox(key=key)

    class Late(type(box)):
        @property
        def _widget_state(self):
            state = WidgetState()
            state.id, state.string_value = self.id, option_name
            return state

    box.__class__ = Late


def test_a_late_rerun_with_the_old_texts_picker_and_address_keeps_the_followed_token():
    """The quick-change race: the text is typed, and a click sends its rerun before the browser got the page's
    answer. That rerun carries the old text's picker values ('it (10)', 'animal (2)') and address (fh_query=10):
    read in the new text, position 10 is 'because'. The page reads them in the text they were chosen in."""
    at = run_app({"text": ANIMAL}, page="app_pages/find_head.py")
    at.text_area(key="text").set_value(TROPHY).run()
    assert (picked(at, "fh_query"), picked(at, "fh_key")) == ("it (11)", "trophy (2)")
    at.query_params["fh_query"], at.query_params["fh_key"] = "10", "2"  # the address before the page's last write
    send_late(at, "fh_query", "it (10)")
    send_late(at, "fh_key", "animal (2)")
    at.toggle(key="scaled").set_value(False).run()
    assert_healthy(at)
    assert (picked(at, "fh_query"), picked(at, "fh_key")) == ("it (11)", "trophy (2)")
    said = page_text(at)
    assert r"query it \(11\)" in said and r"key trophy \(2\)" in said
    assert at.query_params["fh_query"] == "11" and at.query_params["fh_key"] == "2"


def test_a_rerun_with_the_address_from_before_the_pages_last_write_keeps_the_picked_token():
    """Two quick picks on one text: the query, then at once the key. The key's rerun can leave the browser before
    the page's write of the new query (fh_query=9) has reached its address, so it carries fh_query=10, a position
    the page wrote itself before: not a new link. The query picked stays (a clean-clone run of
    tests/browser/test_browser_find_head_qk_space.py ended on query it (10), 2026-11-27)."""
    at = run_app({"text": ANIMAL, "fh_query": "10", "fh_key": "2"}, page="app_pages/find_head.py")
    at.selectbox(key="fh_query").set_value(9).run()
    assert at.query_params["fh_query"] == "9"
    at.query_params["fh_query"] = "10"  # the address before the page's last write
    at.selectbox(key="fh_key").set_value(8).run()
    assert_healthy(at)
    assert (picked(at, "fh_query"), picked(at, "fh_key")) == ("because (9)", "street (8)")
    assert r"query because \(9\)" in page_text(at)
    assert at.query_params["fh_query"] == "9" and at.query_params["fh_key"] == "8"


def test_a_late_rerun_on_step_by_step_keeps_the_followed_token():
    at = run_app({"text": ANIMAL, "sbs_query": "10: it", "sbs_key": "9: because"}, page="app_pages/step_by_step.py")
    at.text_area(key="text").set_value(TROPHY).run()
    assert (picked(at, "sbs_query"), picked(at, "sbs_key")) == ("11: it", "10: because")
    at.query_params["sbs_query"], at.query_params["sbs_key"] = "10: it", "9: because"
    send_late(at, "sbs_query", "10: it")
    send_late(at, "sbs_key", "9: because")
    at.toggle(key="scaled").set_value(False).run()
    assert_healthy(at)
    assert (picked(at, "sbs_query"), picked(at, "sbs_key")) == ("11: it", "10: because")


def test_a_late_rerun_with_the_old_texts_address_keeps_the_explorers_followed_cell():
    at = run_app({"text": ANIMAL, "sbs_head": "1", "sbs_query": "10: it", "sbs_key": "9: because"})
    at.text_area(key="text").set_value(TROPHY).run()
    assert at.session_state["why_sel"] == Selection(1, 11, 10)
    at.query_params["sbs_query"], at.query_params["sbs_key"] = "10: it", "9: because"  # before the page's write
    at.toggle(key="per_head").set_value(True).run()  # a rerun of the part that reads the link (the scale's is not)
    assert_healthy(at)
    assert at.session_state["why_sel"] == Selection(1, 11, 10)
    assert at.query_params["sbs_query"] == "11: it" and at.query_params["sbs_key"] == "10: because"


def test_a_late_rerun_on_the_decoder_block_keeps_the_followed_position():
    """The decoder block's position picker names rows read→written of the model's own answer: after a new source, the
    same row where the new answer has it, and a late rerun with the old answer's row name does not undo that."""
    at = run_app({"dec_source": "three thousand four hundred twelve", "dec_pos": "4: 1→2"},
                 page="app_pages/decoder_block.py")
    assert picked(at, "dec_pos").endswith("1→2")  # 3412: </s>→<s>, <s>→3, 3→4, 4→1, 1→2, 2→</s>
    old = picked(at, "dec_pos")
    at.text_input(key="dec_source").set_value("one thousand two hundred thirty four").run()  # 1234
    assert_healthy(at)
    new = picked(at, "dec_pos")
    assert new.endswith("1→2") and new != old, (old, new)
    at.query_params["dec_pos"] = old
    send_late(at, "dec_pos", old)
    at.slider(key="dec_first").set_value(16).run()
    assert_healthy(at)
    assert picked(at, "dec_pos") == new
