"""A page drawn once and shown to many (ui/streamlit_private/drawn_again.py): what a run's messages leave on the page,
as the frontend builds it, and a drawing's widgets shown but taking no input. The drawing sent to followers in a real
server: tests/browser/test_browser_follow_wake.py."""

from streamlit.proto.Block_pb2 import Block
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

from ui.streamlit_private import Drawn, shown_only, with_styles
from ui.streamlit_private.drawn_again import tree_of


def element(path: list[int], text: str = "", kind: str = "markdown") -> ForwardMsg:
    msg = ForwardMsg()
    msg.metadata.delta_path[:] = path
    if kind == "markdown":
        msg.delta.new_element.markdown.body = text
    elif kind == "empty":
        msg.delta.new_element.empty.SetInParent()
    elif kind == "transient":
        msg.delta.new_transient.SetInParent()
    return msg


def block(path: list[int], key: str = "") -> ForwardMsg:
    msg = ForwardMsg()
    msg.metadata.delta_path[:] = path
    msg.delta.add_block.flex_container.border = bool(key)
    if key:
        msg.delta.add_block.id = f"$$ID-0123abcd-{key}"
    return msg


def texts(drawn: tuple[Drawn, ...]) -> list:
    """What was drawn as nested lists of markdown bodies (a block: a list of its parts)."""
    return [texts(d.children) if d.block is not None else d.element.markdown.body for d in drawn]


def test_a_runs_messages_leave_what_the_frontend_shows_in_the_main_area():
    messages = [
        element([0, 0], "title"),
        block([0, 1], key="lecture_question"),
        element([0, 1, 0], "question"),
        element([0, 1, 1], kind="empty"),  # a placeholder, written below
        element([0, 1, 1], "filled in"),
        element([0, 2], "spinner", kind="transient"),  # gone when the run ends
        element([0, 3], kind="empty"),  # a placeholder never written: nothing drawn
        element([1, 0], "the sidebar's"),  # another root container
        block([0, 4]),
        element([0, 4, 0], "old"),
        block([0, 4]),  # written again at the same path: holds nothing of the old block's
        element([0, 4, 0], "new"),
    ]
    drawn = tree_of(messages)
    assert texts(drawn) == ["title", ["question", "filled in"], ["new"]]
    assert [d.key for d in drawn] == ["", "lecture_question", ""]
    assert texts(tree_of(messages, root=1)) == ["the sidebar's"]


def test_a_drawings_widgets_show_their_value_and_take_no_input():
    pills = ForwardMsg().delta.new_element
    pills.button_group.id = "$$ID-77aa-lecture_answer_ABCDE_1"
    pills.button_group.query_param_key = "answer"
    pills.button_group.default[:] = [2]
    chart = ForwardMsg().delta.new_element
    chart.plotly_chart.id = "$$ID-88bb-qk_plot"
    chart.plotly_chart.selection_mode[:] = [0]
    text = ForwardMsg().delta.new_element
    text.markdown.body = "**Question.**"
    holder = Drawn(block=Block(), children=(Drawn(element=pills), Drawn(element=chart), Drawn(element=text)))

    shown = shown_only(holder)
    got_pills, got_chart, got_text = (d.element for d in shown.children)
    assert got_pills.button_group.disabled and not got_pills.button_group.query_param_key
    assert list(got_pills.button_group.default) == [2]  # the value shown is the one drawn
    assert not got_chart.plotly_chart.selection_mode
    assert got_text == text
    assert not pills.button_group.disabled and pills.button_group.query_param_key == "answer"  # a copy: the drawing
    assert [d.key for d in shown.children] == ["lecture_answer_ABCDE_1", "qk_plot", ""]


def html(path: list[int], body: str) -> ForwardMsg:
    msg = ForwardMsg()
    msg.metadata.delta_path[:] = path
    msg.delta.new_element.html.body = body
    return msg


def test_a_pages_style_only_html_goes_with_the_drawing_into_its_first_html():
    """Streamlit sends a style-only st.html to the event container (it takes no room in the page): a drawing of the
    main area alone would lose the page's CSS (the phone's order of the class's answers under the figure)."""
    messages = [element([0, 0], "title"), block([0, 1]), html([0, 1, 0], "<div>the bar</div>"),
                html([2, 0], "<style>.a { order: 1; }</style>"), html([2, 1], "<style>.b {}</style>")]
    styles = tuple(d.element.html.body for d in tree_of(messages, root=2))
    drawn = with_styles(tree_of(messages), styles)
    assert drawn[1].children[0].element.html.body == "<style>.a { order: 1; }</style><style>.b {}</style><div>the bar</div>"
    assert tree_of(messages)[1].children[0].element.html.body == "<div>the bar</div>"  # a copy
    bare = with_styles(tree_of([element([0, 0], "only words")]), styles)
    assert bare[0].element.html.body.startswith("<style>.a") and texts(bare[1:]) == ["only words"]
