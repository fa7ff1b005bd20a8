"""The one registry of mask kinds: each carries its label, description and parameters, how its spec is written and
read, how its matrix is built, and how many pairs it lets through.

Everything that offers or reads a mask (the sidebar's picker, Compare's side B, the Masks lab's gallery and cost
chart, `parse_mask`, the API's error messages) looks a kind up here, so a new kind is one entry (or one call to
`register_mask_kind`). A spec is the kind's name, then its parameters in order, each after a ':' ("window:2",
"global:1:0,5", "random:0.3:0"); a missing parameter takes its default, so a kind's defaults are its example (the
gallery's sliders override the parameters they name). Specs combine with '&' (logical AND): "causal&window:2".
The matrices themselves are built by attnviz.engine.masks.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch

from attnviz.engine.masks import (
    causal_mask,
    combine_masks,
    custom_mask,
    global_local_mask,
    key_padding_mask,
    random_mask,
    strided_mask,
    window_mask,
)
from attnviz.errors import AttnvizError


@dataclass(frozen=True)
class MaskParameter:
    """One parameter of a mask kind, as a widget shows it and a spec writes it."""

    name: str  # the widget key and URL name ("window"); unique across all kinds
    label: str  # the widget's label
    default: int | float | str
    low: int | float | None = None  # numbers only: the widget's range and step
    high: int | float | None = None
    step: int | float | None = None
    help: str = ""

    def clean(self, value) -> int | float | str:
        """The value as its spec writes it: a whole number, a number, or text without spaces."""
        if value is None:
            value = self.default
        if isinstance(self.default, bool) or not isinstance(self.default, (int, float)):
            return str(value).replace(" ", "").strip()
        whole = isinstance(self.default, int)
        try:
            return int(value) if whole else float(value)
        except (TypeError, ValueError):
            raise AttnvizError(f"{self.label}: expected a {'whole number' if whole else 'number'}, got '{value}'.") from None


def _no_mask(n: int, values: dict) -> None:
    return None


@dataclass(frozen=True)
class MaskKind:
    name: str
    label: str  # for a picker: what it is, with a hint of how
    title: str  # shorter, for a chart's legend or a card's heading
    description: str  # one sentence: what it lets a query see
    parameters: tuple[MaskParameter, ...] = ()
    sentence: str = ""  # read aloud beside the heatmaps, its first parameter as {arg} (attnviz.draw.describe)
    build: Callable[[int, dict], torch.Tensor | None] = _no_mask  # (n, parameter values) -> (n, n) bool, or None
    # (n, parameter values) -> the (query, key) pairs it allows, in closed form (expected value for a random kind);
    # None: it has no size of its own (a custom matrix), so the cost chart leaves it out
    pairs: Callable[[int, dict], float] | None = None
    aliases: tuple[str, ...] = ()  # other names a spec may use for it
    button: str = ""  # a few words for the mask button, its first parameter as {arg}; "" = its name and {arg}
    setting: str = ""  # how Compare names it ("the mask (A → B)"), its parameters as {args}; "" = the <name> mask (args)
    decoders_own: bool = False  # a decoder's built-in mask is this one: on a decoder, choosing it adds nothing (causal)
    readable_spec: bool = True  # False: its spec is its whole matrix, too long to read aloud (custom)

    @property
    def masks_nothing(self) -> bool:
        """Whether it builds no matrix: every query sees every key (none)."""
        return self.build is _no_mask

    def adds_nothing_on_a_decoder(self) -> bool:
        """Whether a decoder, whose built-in causal mask always applies, runs the same with it as without it."""
        return self.masks_nothing or self.decoders_own

    def first_value(self, spec: str) -> str:
        """Its first parameter's value in a spec ('2' for 'window:2', the default where the spec leaves it out)."""
        return str(self.values(spec)[self.parameters[0].name]) if self.parameters else ""

    def button_words(self, spec: str) -> str:
        """'window 2' for 'window:2': the mask in a few words, for a button."""
        return (self.button or "{name} {arg}").format(name=self.name, arg=self.first_value(spec)).strip()

    def setting_words(self, spec: str) -> str:
        """'a sliding window of 2' for 'window:2': the mask as a setting that changed, in a sentence."""
        args = ":".join(str(v) for v in self.values(spec).values())
        template = self.setting or ("the {name} mask ({args})" if args else "the {name} mask")
        return template.format(name=self.name, args=args)

    def mask(self, spec: str, n: int) -> torch.Tensor | None:
        """The (n, n) bool mask of a spec of this kind."""
        return self.build(n, self.values(spec))

    def spec(self, values: dict) -> str:
        """The spec these parameter values describe: 'window:2'. Missing values take their defaults."""
        return ":".join([self.name, *(str(p.clean(values.get(p.name))) for p in self.parameters)])

    def values(self, spec: str) -> dict:
        """The parameter values a spec of this kind holds (the inverse of `spec`); missing ones are defaults."""
        _, _, rest = spec.partition(":")
        # the last parameter takes the rest whole: a custom mask's rows, a global mask's "0,5"
        parts = rest.split(":", len(self.parameters) - 1) if self.parameters and rest else []
        return {p.name: p.clean(parts[i] if i < len(parts) and parts[i] != "" else None)
                for i, p in enumerate(self.parameters)}


def _window_pairs(n: int, w: int) -> int:
    """Σ_i |{j : |i − j| ≤ w}| = n(2w' + 1) − w'(w' + 1) with w' = min(w, n − 1): the ends lose w'(w' + 1)."""
    w = min(w, n - 1)
    return n * (2 * w + 1) - w * (w + 1)


def _row_window(n: int, i: int, w: int) -> int:
    """How many keys of row i lie inside the window: positions max(0, i − w) .. min(n − 1, i + w)."""
    return min(n - 1, i + w) - max(0, i - w) + 1


def _strided_pairs(n: int, s: int) -> float:
    """Σ_r c_r², c_r = how many positions have residue r mod s: r residues occur q + 1 times, the other s − r q times."""
    q, r = divmod(n, s)
    return float(r * (q + 1) ** 2 + (s - r) * q**2)


def _global_positions(text: str) -> list[int]:
    """'0,5' -> [0, 5]: a global + local mask's global tokens."""
    try:
        return [int(t) for t in str(text).split(",") if t.strip()]
    except ValueError:
        raise AttnvizError(f"global: the global tokens are whole numbers separated by commas, got '{text}'.") from None


def _global_pairs(n: int, w: int, tokens: list[int]) -> float:
    """The window's pairs + the g full rows and columns of the global tokens not already inside the window."""
    g = sorted({t for t in tokens if 0 <= t < n})
    rows_and_cols = 2 * len(g) * n - len(g) ** 2  # |rows G ∪ cols G|
    # pairs of rows G ∪ cols G already inside the window: g's row and column, minus G×G counted twice
    in_window = 2 * sum(_row_window(n, t, w) for t in g) - sum(1 for a in g for b in g if abs(a - b) <= w)
    return float(_window_pairs(n, w) + rows_and_cols - in_window)


MASKS: dict[str, MaskKind] = {}


def register_mask_kind(kind: MaskKind) -> MaskKind:
    """Offer a mask kind everywhere a mask is offered or read; its name and parameter names must be new (the
    parameters' names are widget keys and URL names, shared by every kind)."""
    taken = {p.name for k in MASKS.values() for p in k.parameters}
    if kind.name in MASKS or any(kind.name in k.aliases for k in MASKS.values()):
        raise ValueError(f"A mask kind named {kind.name!r} is already registered.")
    if clash := taken & {p.name for p in kind.parameters}:
        raise ValueError(f"Mask parameter names {sorted(clash)} are already used by another kind.")
    MASKS[kind.name] = kind
    return kind


for _kind in (
    MaskKind("none", "none (bidirectional)", "none (full, bidirectional)", "Every query sees every key.",
             sentence="no mask: every token may look at every token, before and after it",
             pairs=lambda n, v: float(n * n), aliases=("", "full", "bidirectional"), setting="no mask"),
    MaskKind("causal", "causal (no peeking ahead)", "causal", "Each query sees itself and the tokens before it.",
             sentence="causal: each token sees itself and the tokens before it, never the ones after (as when generating "
                      "text)",
             build=lambda n, v: causal_mask(n), pairs=lambda n, v: n * (n + 1) / 2, decoders_own=True),
    MaskKind("padding", "padding ([PAD] tokens appended)", "padding",
             "[PAD] tokens are appended to the text, and no query may attend to them.",
             (MaskParameter("pad", "[PAD] tokens appended", 3, 1, 8, 1),),
             sentence="padding: the last {arg} token(s) are [PAD] fillers, so no token may look at them",
             # n counts the [PAD] tokens already: they are appended to the text before the mask is built
             build=lambda n, v: key_padding_mask(n, v["pad"]), pairs=lambda n, v: float(n * (n - min(v["pad"], n)))),
    MaskKind("window", "sliding window (local)", "sliding window", "Each query sees the keys at most W positions away.",
             (MaskParameter("window", "Window: keys at most this far away", 2, 0, 8, 1),),
             sentence="sliding window of {arg}: each token sees only tokens at most {arg} positions away",
             build=lambda n, v: window_mask(n, v["window"]), pairs=lambda n, v: float(_window_pairs(n, v["window"])),
             setting="a sliding window of {args}"),
    MaskKind("strided", "strided / dilated (every s-th key, no local window)", "strided / dilated",
             "Each query sees the keys a multiple of S positions away.",
             (MaskParameter("stride", "Stride", 3, 2, 8, 1),),
             sentence="strided by {arg}: each token sees only tokens whose distance from it is a multiple of {arg} (no "
                      "local window: the Sparse Transformer's strided pattern adds one, this mask shows the stride "
                      "alone)",
             build=lambda n, v: strided_mask(n, v["stride"]), pairs=lambda n, v: _strided_pairs(n, v["stride"])),
    MaskKind("global", "global + local (Longformer)", "global + local",
             "A local window of W, plus global tokens that see and are seen by every token.",
             (MaskParameter("gwindow", "Local window", 1, 0, 8, 1),
              MaskParameter("globals", "Global token positions (comma separated)", "0")),
             sentence="global + local: a window of {arg} around each token, plus global tokens that see and are seen by all",
             build=lambda n, v: global_local_mask(n, v["gwindow"], _global_positions(v["globals"])),
             pairs=lambda n, v: _global_pairs(n, v["gwindow"], _global_positions(v["globals"])),
             button="global + local {arg}", setting="the global mask"),
    MaskKind("random", "random (Bernoulli per pair, seeded)", "random (Bernoulli per pair)",
             "Each query–key pair is kept with probability P (the diagonal always), from a seeded draw.",
             (MaskParameter("keep", "Keep probability", 0.3, 0.05, 1.0, 0.05),
              MaskParameter("seed", "Seed", 0, 0, 10_000, 1)),
             sentence="random (Bernoulli per pair): each token pair is kept by its own seeded coin flip, so about p·n² pairs "
                      "remain; every token still sees itself (BigBird instead keeps a few random keys per query)",
             build=lambda n, v: random_mask(n, v["keep"], v["seed"]),
             pairs=lambda n, v: v["keep"] * n * n + (1 - v["keep"]) * n),  # the diagonal is always kept
    MaskKind("custom", "custom 0/1 matrix", "custom", "Rows of 0 and 1 written out: one row per query, one digit per key.",
             (MaskParameter("custom", "Rows of 0/1, '/' between rows", "",
                            help="One row per query token, one digit per key token. Empty = the causal pattern "
                                 "for the current text."),),
             sentence="custom: the pattern you wrote, row by row (1 = may look, 0 = may not)",
             build=lambda n, v: custom_mask(v["custom"], n), button="custom", setting="a custom mask", readable_spec=False),
):
    register_mask_kind(_kind)


def mask_kind(name: str) -> MaskKind:
    """The registry's entry for a kind name (or one of its aliases), or a clear error naming the kinds there are."""
    key = (name or "").strip().lower()
    kind = MASKS.get(key) or next((k for k in MASKS.values() if key in k.aliases), None)
    if kind is None:
        raise AttnvizError(f"Unknown mask '{name}'. Choose one of: {', '.join(MASKS)}.")
    return kind


def parse_mask(spec, n: int) -> torch.Tensor | None:
    """A mask spec (see the module doc), a bool tensor, or None -> an (n, n) bool mask or None (no mask).

    A fully masked query row is left to attention: it gets zero weights (attnviz.engine.attention.masked_softmax)."""
    if spec is None:
        return None
    if isinstance(spec, torch.Tensor):
        if spec.dtype != torch.bool:
            raise AttnvizError(f"A mask tensor must be boolean (True = may attend), got dtype {spec.dtype}.")
        if tuple(spec.shape[-2:]) != (n, n):
            raise AttnvizError(f"The mask must be {n}×{n} for {n} tokens, got shape {tuple(spec.shape)}.")
        return spec
    if not isinstance(spec, str):
        raise AttnvizError(f"A mask must be a name such as 'causal', a bool tensor or None, not {type(spec).__name__}.")
    return combine_masks(*(mask_kind(part.partition(":")[0]).mask(part.strip(), n) for part in spec.split("&")))


def padding_count(spec) -> int:
    """How many [PAD] tokens a spec asks to append (its 'padding:K' part), 0 if none."""
    if not isinstance(spec, str):
        return 0
    parts = [part.strip() for part in spec.split("&")]
    return sum(MASKS["padding"].values(part)["pad"] for part in parts
               if part.partition(":")[0].strip().lower() == "padding")


def spec_from_values(values: dict) -> str:
    """The spec that a picker's values describe: {"mask": "window", "window": 2} -> 'window:2'."""
    return mask_kind(str(values.get("mask") or "none")).spec(values)


def values_from_spec(spec: str) -> dict:
    """A picker's values for a single-kind spec (the inverse of spec_from_values): every kind's parameters,
    the spec's own filled in, the others at their defaults."""
    kind = mask_kind(spec.partition(":")[0])
    values: dict[str, object] = {p.name: p.default for k in MASKS.values() for p in k.parameters}
    values.update(kind.values(spec), mask=kind.name)
    return values
