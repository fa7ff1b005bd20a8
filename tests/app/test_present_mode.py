"""Presentation mode: ?present=1 in a link turns it on (larger type), the toggle turns it off again."""

import os

os.environ["HF_HUB_OFFLINE"] = "1"

from apptest_helpers import assert_healthy, run_app

PAGE = "app_pages/masks.py"


def presentation_css(at) -> bool:
    return any("font-size: 19px" in str(h.proto.body) for h in at.get("html"))


def test_a_link_with_present_1_opens_in_presentation_mode_and_the_toggle_leaves_it():
    at = run_app({"present": "1", "model": "toy", "text": "the cat sat"}, page=PAGE)
    assert_healthy(at)
    assert at.toggle(key="present").value is True and presentation_css(at)
    at.toggle(key="present").set_value(False).run()
    assert_healthy(at)
    assert not presentation_css(at)


def test_without_the_link_presentation_mode_is_off():
    at = run_app({"model": "toy", "text": "the cat sat"}, page=PAGE)
    assert at.toggle(key="present").value is False and not presentation_css(at)


def test_on_a_projector_a_lessons_own_model_is_a_line_of_small_type_not_a_box():
    at = run_app({"present": "1"}, page="app_pages/cross_attention.py")
    assert_healthy(at)
    said = [c.value for c in at.caption if "has no decoder" in c.value]
    assert said and "attnviz-tiny-bart" in said[0]
    assert not [i for i in at.info if "has no decoder" in i.value]
