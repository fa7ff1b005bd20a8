"""The generated sweep of every page's links and typed inputs: which URL keys a page has, what values to try on each,
and what a run must never show. Used by tests/app/test_link_sweep.py (a seeded sample) and benchmarks/sweep_links.py
(the long run).

Where the keys come from (nothing here lists them by hand, so a page that adds a key is swept without a new test):
- the bound widgets: after an AppTest run of the page, every widget whose proto carries a `query_param_key` (what
  `bind="query-params"`, ui.pickers.BOUND, sets), with the range, options or length limit the widget itself
  declares;
- the page's own keys: every key the page's code reads from st.query_params during the run (keep_in_link,
  seed_from_url, seed_choice_from_url, settle_token, the explorer's selection, a lecture's plan id...), caught by
  watching st.query_params' reads while the page runs;
- keys a page draws only for some choice (a mask's parameters, "other"'s model folder, a method's knobs): every
  option of each bound choice widget is opened once, and what it adds is swept too.
The pages come from app.py's navigation (tests/apptest_helpers.app_menu, the same list ui/menu.py gets).
"""

from __future__ import annotations

import contextlib
import re
import time
from dataclasses import dataclass, field
from functools import cache

from apptest_helpers import app_menu, page_text, run_app
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import seed as hseed
from hypothesis import strategies as hs
from streamlit.proto.NumberInput_pb2 import NumberInput
from streamlit.proto.Slider_pb2 import Slider
from streamlit.runtime.state.query_params_proxy import QueryParamsProxy

from ui.across_pages import shared_keys

CHOICE_KINDS = ("selectbox", "radio", "button_group", "select_slider", "toggle", "checkbox")
TYPED_KINDS = ("text_input", "text_area", "number_input")
LONGEST_URL_VALUE = 200_000  # far longer than any form sends (the text box's own limit is 20,000 characters)
# a Unicode category's characters; Cs (lone surrogates) cannot travel in a URL (UTF-8 has no spelling for them)
CATEGORIES = ("Lu", "Ll", "Lt", "Lm", "Lo", "Mn", "Mc", "Me", "Nd", "Nl", "No", "Pc", "Pd", "Ps", "Pe", "Pi", "Pf",
              "Po", "Sm", "Sc", "Sk", "So", "Zs", "Zl", "Zp", "Cc", "Cf", "Co", "Cn")
MARKUP = ("<script>alert(1)</script>", "<img src=x onerror=alert(1)>", "**bold** _it_ `code`", "$\\frac{1}{0}$",
          "$$\\begin{bmatrix}x\\end{bmatrix}$$", "\\", "{{7*7}}", "[a](javascript:alert(1))", ":red[x] :material/warning:",
          "</textarea><b>x", "' OR 1=1 --", "../../etc/passwd", "%00", "%s%n", "\u202eevil", "null", "None",
          "NaN", "undefined", "[]", "{}", "true")
NUMBER_WORDS = ("", " ", "0", "-0", "-1", "1.5", "+3", " 3 ", "1e309", "-1e309", "nan", "inf", "-inf", "1_000",
                "0x1f", "٣", "½", "07", "9" * 40, "-" + "9" * 40, "1e-320", "abc")


@dataclass(frozen=True)
class UrlKey:
    """A key a page reads from its link, and what the page itself says about its values."""

    name: str
    kind: str  # the widget kind bound to it ("slider", "text_area", ...), or "read" for a key the page's code reads
    options: tuple[str, ...] = ()  # a choice widget's options as the link spells them
    low: float | None = None
    high: float | None = None
    step: float | None = None
    integer: bool = False
    max_chars: int = 0


@dataclass
class PageKeys:
    file: str
    url_path: str
    keys: dict[str, UrlKey] = field(default_factory=dict)
    typed: dict[str, UrlKey] = field(default_factory=dict)  # every keyed text box and number box, bound or not
    opened_by: dict[str, dict] = field(default_factory=dict)  # key -> the link that draws it, for a key not drawn at first


# ---- discovery --------------------------------------------------------------------------------------------------


@contextlib.contextmanager
def watched_reads(seen: set[str]):
    """Every key read from st.query_params while this is open goes into `seen` (get, `in`, [], get_all and attribute
    reads all go through these three methods)."""
    originals = {name: getattr(QueryParamsProxy, name) for name in ("__getitem__", "get_all", "__getattr__")}

    def spy(name):
        def read(self, key, *args):
            seen.add(str(key))
            return originals[name](self, key, *args)
        return read

    for name in originals:
        setattr(QueryParamsProxy, name, spy(name))
    try:
        yield
    finally:
        for name, method in originals.items():
            setattr(QueryParamsProxy, name, method)


def _widget_key(element) -> UrlKey | None:
    """The URL key a drawn widget is bound to, with what the widget declares about its values; None if unbound."""
    proto = element.proto
    name = getattr(proto, "query_param_key", "") or ""
    return _describe(element, name) if name else None


def _describe(element, name: str) -> UrlKey:
    kind, proto = element.type, element.proto
    if kind in ("slider", "number_input"):
        return UrlKey(name, kind, low=getattr(element, "min", None), high=getattr(element, "max", None),
                      step=float(element.step) if element.step is not None else None, integer=_int_kind(element))
    if kind in ("text_input", "text_area"):
        return UrlKey(name, kind, max_chars=int(proto.max_chars or 0))
    if kind in ("toggle", "checkbox"):
        return UrlKey(name, kind, options=("true", "false"))
    options = tuple(str(option) for option in getattr(element, "options", ()) or ())
    return UrlKey(name, kind, options=options)


def _widgets(at) -> list:
    kinds = (*CHOICE_KINDS, *TYPED_KINDS, "slider", "multiselect", "segmented_control", "pills")
    found = []
    for kind in kinds:
        with contextlib.suppress(Exception):
            found += list(at.get(kind))
    return found


def _int_kind(element) -> bool:
    """Whether a slider or number box holds integers (its proto's data type)."""
    proto = element.proto
    if element.type == "number_input":
        return proto.data_type == NumberInput.INT
    return proto.data_type == Slider.INT


def _observe(at, read: set[str]) -> tuple[dict[str, UrlKey], dict[str, UrlKey]]:
    """(the URL keys of this run: bound widgets and keys the code read, the typed inputs drawn)."""
    keys, typed = {}, {}
    for element in _widgets(at):
        info = _widget_key(element)
        if info is not None:
            keys[info.name] = info
        if element.type in TYPED_KINDS and element.key:
            typed[element.key] = _describe(element, element.key)
    for name in read:
        keys.setdefault(name, UrlKey(name, "read"))
    return keys, typed


def _run_watched(page: str, query: dict) -> tuple[object, set[str]]:
    seen: set[str] = set()
    with watched_reads(seen):
        at = run_app(query, page=page, timeout=120)
    return at, seen


def _expansion(page: str, name: str, option: str) -> tuple[dict[str, UrlKey], dict[str, UrlKey]]:
    """What opening `page` with name=option adds (each opening made once)."""
    if (page, name, option) not in _OPENED:
        at, seen = _run_watched(page, {name: option})
        _OPENED[page, name, option] = _observe(at, seen)
    return _OPENED[page, name, option]


_OPENED: dict = {}


def _shared_expansion(page: str, name: str, option: str):
    """A shared setting (ui.across_pages.shared_keys(): the sidebar's model, mask, ...) draws the same widgets on every page:
    opened on the first page that asks, and reused."""
    if (name, option) not in _SHARED_SEEN:
        _SHARED_SEEN[name, option] = _expansion(page, name, option)
    return _SHARED_SEEN[name, option]


_SHARED_SEEN: dict = {}


def _worth_opening(info: UrlKey, drawn_value, deep: bool) -> list[str]:
    """The options of a choice to open one by one, to find the keys they draw. Not the one already drawn; and in the
    quick mode not a choice of numbers (a layer, a head, a count: they change figures, not which controls there are)."""
    if info.kind not in ("selectbox", "radio", "segmented_control", "button_group", "toggle", "checkbox", "pills"):
        return []
    options = [o for o in info.options if o != str(drawn_value).lower() and o != str(drawn_value)]
    numeric = all(re.fullmatch(r"[=A-Z ()]*-?\d+.*", o) for o in info.options)
    if not deep and (numeric or len(info.options) > 16):
        return []
    return options


@cache
def page_keys(file: str, deep: bool = False) -> PageKeys:
    """Every URL key and typed input of one page (see the module's docstring). deep: open every option of every choice
    (the long run); else skip choices of numbers."""
    at, seen = _run_watched(file, {})
    keys, typed = _observe(at, seen)
    drawn = {e.proto.query_param_key: e.value for e in _widgets(at) if getattr(e.proto, "query_param_key", "")}
    found = PageKeys(file, {f: p for f, p, _ in app_menu()}[file], dict(keys), dict(typed))
    for info in list(keys.values()):  # one level: the other options of every choice the default run drew
        for option in _worth_opening(info, drawn.get(info.name), deep):
            opened = _shared_expansion if info.name in shared_keys() and not deep else _expansion
            more, more_typed = opened(file, info.name, option)
            for name, extra in more.items():
                found.keys.setdefault(name, extra)
            for name, extra in more_typed.items():
                if name not in found.typed:
                    found.typed[name] = extra
                    found.opened_by[name] = {info.name: option}
    return found


def pages() -> list[str]:
    """Every page's file, in menu order."""
    return [file for file, _, _ in app_menu()]


# ---- values -----------------------------------------------------------------------------------------------------


def unicode_text(max_size: int = 40) -> hs.SearchStrategy[str]:
    """Text of one Unicode category at a time (each category in turn gets its chance), NUL and controls included."""
    return hs.sampled_from(CATEGORIES).flatmap(
        lambda cat: hs.text(hs.characters(categories=[cat]), min_size=1, max_size=max_size))


def long_text(limit: int) -> hs.SearchStrategy[str]:
    """Lengths at and past a limit (the limit, one more, ten times, LONGEST_URL_VALUE), of words or of one code point."""
    lengths = sorted({n for n in (limit, limit + 1, 10 * limit, LONGEST_URL_VALUE) if n > 0})
    units = hs.sampled_from(["word ", "é", "猫", "🍕", "\x00", "<b>", "a"])
    return hs.tuples(hs.sampled_from(lengths), units).map(lambda nu: (nu[1] * (nu[0] // len(nu[1]) + 1))[:nu[0]])


def _numbers(info: UrlKey) -> list[str]:
    """The edges of a control's own range, just past them, and the middle; spelled as the link would."""
    low, high = info.low, info.high
    step = info.step or (1 if info.integer else 0.01)
    edge = []
    for x in (low, high):
        if x is None:
            continue
        edge += [x, x - step, x + step, x - step / 1000, x + step / 1000]
    if low is not None and high is not None:
        edge += [(low + high) / 2, high * 10 + 1]
    spelled = []
    for x in edge:
        spelled.append(str(int(x)) if info.integer and float(x).is_integer() else repr(float(x)))
        if float(x).is_integer():
            spelled.append(str(int(x)))
    return spelled


def values_for(info: UrlKey) -> hs.SearchStrategy[str | list[str]]:
    """Values to put after `key=` in a link, for this key: its own edges and options first, then every kind of
    wrong value. A list stands for a repeated key (?k=a&k=b)."""
    wrong = hs.one_of(hs.sampled_from(NUMBER_WORDS), hs.sampled_from(MARKUP), unicode_text(),
                      hs.integers(-10**6, 10**6).map(str), hs.floats(allow_nan=True, allow_infinity=True).map(repr))
    own: list[hs.SearchStrategy] = []
    if info.kind in ("slider", "number_input") and _numbers(info):
        own.append(hs.sampled_from(_numbers(info)))
    if info.options:
        options = list(info.options)
        own.append(hs.sampled_from(options))
        own.append(hs.sampled_from(options).map(lambda o: o.upper() if o != o.upper() else o.lower()))
        own.append(hs.sampled_from(options).map(lambda o: o + " "))
        own.append(hs.integers(-2, len(options) + 1).map(str))  # an index where a label is expected
    if info.kind in ("text_input", "text_area"):
        own.append(long_text(info.max_chars or 400))
    if info.kind == "read" or not info.kind.startswith("text"):
        own.append(long_text(2000))  # free-text URL values far longer than any form sends
    repeated = hs.lists(hs.one_of(*own, wrong) if own else wrong, min_size=2, max_size=3)
    if info.kind == "multiselect":
        items = hs.sampled_from(list(info.options) or ["0"])
        repeated = hs.lists(hs.one_of(items, wrong), min_size=1, max_size=40)
    single = hs.one_of(*own, wrong) if own else wrong
    return hs.one_of(single, single, repeated)


def typed_values(info: UrlKey) -> hs.SearchStrategy:
    """What a user can type into this box: text up to its limit in every category, or numbers at and inside its edges
    (a browser's number box keeps to its range)."""
    if info.kind == "number_input":
        low = -1e9 if info.low is None else info.low
        high = 1e9 if info.high is None else info.high
        edges = [low, high, low + (info.step or 1), high - (info.step or 1), (low + high) / 2]
        edges = [x for x in edges if low <= x <= high]
        if info.integer:
            return hs.one_of(hs.sampled_from([int(x) for x in edges]), hs.integers(int(low), int(high)))
        return hs.one_of(hs.sampled_from(edges), hs.floats(low, high, allow_nan=False))
    limit = info.max_chars or 20_000
    at_limit = hs.sampled_from(["word ", "é", "猫", "🍕", "\x00", "$x$", "a"]).map(lambda u: (u * (limit // len(u) + 1))[:limit])
    return hs.one_of(hs.sampled_from(["", " ", "\n\t", *MARKUP]), unicode_text(), at_limit,
                     hs.text(max_size=min(limit, 300)))


# ---- what a run must never show ---------------------------------------------------------------------------------

NEVER = re.compile(r"Traceback|Errno|could not be drawn|\bnan\b|\bNaN\b", re.IGNORECASE)
SHOWS = ("plotly_chart", "bidi_component", "latex", "dataframe", "table", "image", "metric", "code", "json")


def problems(at, echoed=(), whole_page: bool = True) -> list[str]:
    """Why this run is not 'a drawn page or a clear message' ([] when it is). echoed: the values the link or the user
    gave, which a clear message may quote ("no lecture plan 'NaN'"): left out of the search for NaN and the like.
    whole_page=False: a rerun of the page's parts alone, whose title and the rest are not in AppTest's tree."""
    found = [f"exception element: {e.value[:300]}" for e in at.exception]
    text = page_text(at)
    for element_kind in ("text", "code", "json", "metric"):
        with contextlib.suppress(Exception):
            text += "\n" + "\n".join(str(e.value) for e in at.get(element_kind))
    for value in sorted((str(v) for v in echoed if str(v)), key=len, reverse=True):
        # in any case: a message may quote a value as the app reads it (a room code upper-cased: "no room NAN")
        text = re.sub(re.escape(value), "«quoted»", text, flags=re.IGNORECASE)
    for match in NEVER.finditer(text.replace("nanoseconds", "")):
        start = max(match.start() - 120, 0)
        found.append(f"{match.group(0)!r} on the page: …{text[start:match.end() + 120]}…")
    if not whole_page:
        return found
    if not at.title:
        found.append("no title: the page was not drawn")
    alerts = len(at.error) + len(at.warning) + len(at.info) + len(at.success)
    shown = sum(len(_safe_get(at, kind)) for kind in SHOWS)
    if not alerts and not shown:
        found.append("an empty page: no figure, no number, no message")
    return found


def _safe_get(at, kind):
    try:
        return list(at.get(kind))
    except Exception:
        return []


def run_case(file: str, query: dict) -> tuple[list[str], object | None, float]:
    """Open this page with this link: (problems, the AppTest, seconds). A run that raises is a problem too."""
    started = time.perf_counter()
    try:
        at = run_app(query, page=file, timeout=120)
    except Exception as err:  # the run itself failed: that is what the sweep reports
        return [f"the run raised {type(err).__name__}: {str(err)[:300]}"], None, time.perf_counter() - started
    return problems(at, _flat(query.values())), at, time.perf_counter() - started


def _flat(values) -> list[str]:
    return [str(x) for v in values for x in (v if isinstance(v, list) else [v])]


def type_case(file: str, key: str, value, query: dict | None = None) -> tuple[list[str], object | None, float]:
    """Open this page, type `value` into the box under `key`, and rerun: (problems, the AppTest, seconds)."""
    started = time.perf_counter()
    try:
        at = run_app(query or {}, page=file, timeout=120)
        box = next((e for e in _widgets(at) if e.key == key and e.type in TYPED_KINDS), None)
        if box is None:  # drawn only for a choice the page opens with something else: nothing to type into here
            return [], at, time.perf_counter() - started
        box.set_value(value)
        at.run(timeout=120)
        echoed = _flat([value, *(query or {}).values()])
        # no title: a rerun of the page's parts alone (ui.state.rerun_parts: the scale's boxes), after which AppTest
        # holds only what the parts drew, where a browser keeps the rest of the page. What they drew is checked here;
        # the whole page below, as the browser shows it, drawn again with the same state
        found = problems(at, echoed, whole_page=bool(at.title))
        if not at.title:
            at.run(timeout=120)
            found += problems(at, echoed)
    except Exception as err:  # the run itself failed: that is what the sweep reports
        return [f"the run raised {type(err).__name__}: {str(err)[:300]}"], None, time.perf_counter() - started
    return found, at, time.perf_counter() - started


def shorten(value, limit: int = 80) -> str:
    """A value as a report line shows it: long ones by their length and first characters."""
    if isinstance(value, list):
        return "[" + ", ".join(shorten(v, limit // 2) for v in value[:4]) + (", …" if len(value) > 4 else "") + "]"
    text = repr(value)
    return text if len(text) <= limit else f"{text[:limit]}… ({len(str(value))} chars)"


# ---- the drivers (the suite's seeded sample and benchmarks/sweep_links.py's long run) -------------------------------


def sweep_links(file: str, cases: int, seed: int, on_case, deep: bool = False) -> None:
    """Open `file` with `cases` generated links (one or two of its keys, each with a value from values_for), calling
    on_case(query, problems, at, seconds) after each. on_case may raise to stop at the first problem (the suite)."""
    keys = page_keys(file, deep).keys
    names = sorted(keys)

    @hseed(seed)
    @settings(max_examples=cases, database=None, deadline=None, phases=[Phase.generate],
              suppress_health_check=list(HealthCheck))
    @given(hs.data())
    def one_link(data):
        picked = data.draw(hs.lists(hs.sampled_from(names), min_size=1, max_size=2, unique=True), label="keys")
        query = {name: data.draw(values_for(keys[name]), label=name) for name in picked}
        on_case(query, *run_case(file, query))

    one_link()


def sweep_typing(file: str, cases: int, seed: int, on_case, deep: bool = False) -> None:
    """Type `cases` generated values into the page's text and number boxes: on_case((key, value), problems, at, s)."""
    page = page_keys(file, deep)
    typed = page.typed
    if not typed:
        return
    names = sorted(typed)

    @hseed(seed)
    @settings(max_examples=cases, database=None, deadline=None, phases=[Phase.generate],
              suppress_health_check=list(HealthCheck))
    @given(hs.data())
    def one_entry(data):
        name = data.draw(hs.sampled_from(names), label="box")
        value = data.draw(typed_values(typed[name]), label="value")
        on_case((name, value), *type_case(file, name, value, page.opened_by.get(name, {})))

    one_entry()
