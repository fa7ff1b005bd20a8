"""Every link the app writes reopens the same view: on every page, controls changed to generated values, the link the
address bar then holds (tests/link_round_trip.address_of: what the server wrote and what the browser writes for each
bound widget, nothing for a default), opened fresh, must draw what the page drew. Also the link of the largest input
the app accepts, and a text too long for a link (the address leaves it out and the page says so)."""

import pytest
from apptest_helpers import app_menu, run_app
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import seed as hseed
from hypothesis import strategies as hs
from link_round_trip import address_of, bound_widgets, drawn
from link_sweep import pages, shorten

from ui.across_pages import shared_keys
from ui.pickers import LINK_VALUE_BYTES

CHANGES_PER_PAGE = 1  # generated states per page in the suite (every page: 20 states, each 4 runs)
PATHS = {file: path or "explorer" for file, path, _ in app_menu()}
CHANGEABLE = ("selectbox", "toggle", "checkbox", "number_input", "slider", "text_input", "text_area")


def change(element, data) -> str:
    """Set this widget to a generated value it accepts, as a user could; a description of the change."""
    kind, proto = element.type, element.proto
    if kind == "selectbox":
        index = data.draw(hs.integers(0, len(proto.options) - 1))
        element.select_index(index)
        return f"{element.key} = option {index}"
    if kind in ("toggle", "checkbox"):
        element.set_value(not element.value)
        return f"{element.key} flipped"
    if kind in ("number_input", "slider"):
        low = proto.min if kind == "slider" or proto.has_min else -1000
        high = proto.max if kind == "slider" or proto.has_max else 1000
        steps = int(min((high - low) / (proto.step or 1), 10**6))
        value = low + data.draw(hs.integers(0, steps)) * (proto.step or 1)
        value = int(value) if proto.data_type == 1 else round(value, 10)  # 1: INT in both protos
        element.set_value(value)
        return f"{element.key} = {value}"
    limit = proto.max_chars or 400
    text = data.draw(hs.one_of(hs.just(""), hs.text(max_size=min(limit, 200)),
                               hs.sampled_from(["a b c", "The cat sat on the mat.", "über naïve 猫", "<b>x</b> $x$"])))
    element.set_value(text)
    return f"{element.key} = {shorten(text)}"


@pytest.mark.parametrize("file", pages(), ids=PATHS.get)
def test_the_link_the_app_writes_after_any_change_reopens_the_same_view(file, record_property):
    states = []

    @hseed(pages().index(file))
    @settings(max_examples=CHANGES_PER_PAGE, database=None, deadline=None, phases=[Phase.generate],
              suppress_health_check=list(HealthCheck))
    @given(hs.data())
    def one_state(data):
        at = run_app({}, page=file)
        widgets = [e for e in bound_widgets(at) if e.type in CHANGEABLE and not e.proto.disabled]
        if not widgets:
            return
        picked = data.draw(hs.lists(hs.sampled_from(range(len(widgets))), min_size=1, max_size=2, unique=True))
        done = [change(widgets[i], data) for i in picked]
        at.run()
        # a control that reruns only part of the page (the scale: ui.state.rerun_parts) leaves AppTest's tree holding
        # that part alone; the browser still shows the rest: one full run, with nothing changed, shows it all
        at.run()
        link = address_of(at)
        fresh = run_app(link, page=file)
        states.append(done)
        assert drawn(fresh) == drawn(at), f"/{PATHS[file]} after {done}: the link {shorten(link, 300)} draws otherwise"
        assert not fresh.toast, [t.value for t in fresh.toast]  # the app's own link: no value of it is refused

    one_state()
    record_property("states", len(states))


def long_text(n_tokens: int) -> str:
    """n_tokens of all-MiniLM-L6-v2 ([CLS] and [SEP] included): one token per word."""
    return " ".join(["cat"] * (n_tokens - 2))


def test_the_link_of_the_largest_text_the_app_runs_reopens_it():
    at = run_app({"text": long_text(512)})
    assert not at.exception and not [e for e in at.warning if "tokens" in e.value]
    link = address_of(at)
    assert link["text"] == long_text(512)
    fresh = run_app(link)
    assert drawn(fresh) == drawn(at)


def test_a_text_too_long_for_a_link_is_left_out_of_the_address_and_the_page_says_so():
    at = run_app({"text": "hello world"})
    at.text_area(key="text").set_value("猫" * (LINK_VALUE_BYTES // 9 + 1)).run()
    assert "text" not in address_of(at)
    assert any("too long for a link" in c.value for c in at.caption)
    at.text_area(key="text").set_value("short again").run()  # fits again: back in the address, as the browser has it
    assert address_of(at)["text"] == "short again" and not any("too long for a link" in c.value for c in at.caption)


@pytest.mark.parametrize("file", pages(), ids=PATHS.get)
def test_a_box_cleared_by_hand_reopens_cleared(file):
    """The address keeps only what differs from a widget's own default: a box whose page put its starting text there
    some other way (seeded into session state) would lose a clearing in the link. Every box that starts non-empty
    (the shared sidebar's on the explorer alone: it is the same on every page)."""
    at = run_app({}, page=file)
    boxes = [e.key for e in bound_widgets(at) if e.type in ("text_input", "text_area") and e.value
             and (file == "app_pages/explorer.py" or e.key not in shared_keys())]
    for key in boxes:
        at = run_app({}, page=file)
        next(e for e in bound_widgets(at) if e.key == key).set_value("")
        at.run()
        at.run()  # the whole page (see above)
        link = address_of(at)
        assert drawn(run_app(link, page=file)) == drawn(at), f"/{PATHS[file]}: {key} cleared, the link {link}"
