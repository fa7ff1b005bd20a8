"""The one registry of mask kinds: for each, its label, description and parameters, and how its spec is written.

Everything that offers a mask (the sidebar's picker, Compare's side B, the Masks lab's gallery, the API's
error messages) reads this table, so a new kind is added here once. The specs themselves are parsed into
boolean matrices by `attnviz.engine.masks.parse_mask`; a spec is the kind's name, then its parameters in
order, each after a ':' ("window:2", "global:1:0,5", "random:0.3:0").
"""

from __future__ import annotations

from dataclasses import dataclass

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
        try:
            return int(value) if isinstance(self.default, int) else float(value)
        except (TypeError, ValueError):
            raise AttnvizError(f"{self.label}: expected a number, got '{value}'.") from None


@dataclass(frozen=True)
class MaskKind:
    name: str
    label: str  # for a picker: what it is, with a hint of how
    title: str  # shorter, for a chart's legend or a card's heading
    description: str  # one sentence: what it lets a query see
    parameters: tuple[MaskParameter, ...] = ()
    sentence: str = ""  # read aloud beside the heatmaps, its first parameter as {arg} (attnviz.draw.describe)

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


MASKS: dict[str, MaskKind] = {kind.name: kind for kind in (
    MaskKind("none", "none (bidirectional)", "none (full, bidirectional)", "Every query sees every key.",
             sentence="no mask: every token may look at every token, before and after it"),
    MaskKind("causal", "causal (no peeking ahead)", "causal", "Each query sees itself and the tokens before it.",
             sentence="causal: each token sees itself and the tokens before it, never the ones after (as when generating "
                      "text)"),
    MaskKind("padding", "padding ([PAD] tokens appended)", "padding",
             "[PAD] tokens are appended to the text, and no query may attend to them.",
             (MaskParameter("pad", "[PAD] tokens appended", 3, 1, 8, 1),),
             sentence="padding: the last {arg} token(s) are [PAD] fillers, so no token may look at them"),
    MaskKind("window", "sliding window (local)", "sliding window", "Each query sees the keys at most W positions away.",
             (MaskParameter("window", "Window: keys at most this far away", 2, 0, 8, 1),),
             sentence="sliding window of {arg}: each token sees only tokens at most {arg} positions away"),
    MaskKind("strided", "strided / dilated (every s-th key, no local window)", "strided / dilated",
             "Each query sees the keys a multiple of S positions away.",
             (MaskParameter("stride", "Stride", 3, 2, 8, 1),),
             sentence="strided by {arg}: each token sees only tokens whose distance from it is a multiple of {arg} (no "
                      "local window: the Sparse Transformer's strided pattern adds one, this mask shows the stride "
                      "alone)"),
    MaskKind("global", "global + local (Longformer)", "global + local",
             "A local window of W, plus global tokens that see and are seen by every token.",
             (MaskParameter("gwindow", "Local window", 1, 0, 8, 1),
              MaskParameter("globals", "Global token positions (comma separated)", "0")),
             sentence="global + local: a window of {arg} around each token, plus global tokens that see and are seen by all"),
    MaskKind("random", "random (Bernoulli per pair, seeded)", "random (Bernoulli per pair)",
             "Each query–key pair is kept with probability P (the diagonal always), from a seeded draw.",
             (MaskParameter("keep", "Keep probability", 0.3, 0.05, 1.0, 0.05),
              MaskParameter("seed", "Seed", 0, 0, 10_000, 1)),
             sentence="random (Bernoulli per pair): each token pair is kept by its own seeded coin flip, so about p·n² pairs "
                      "remain; every token still sees itself (BigBird instead keeps a few random keys per query)"),
    MaskKind("custom", "custom 0/1 matrix", "custom", "Rows of 0 and 1 written out: one row per query, one digit per key.",
             (MaskParameter("custom", "Rows of 0/1, '/' between rows", "",
                            help="One row per query token, one digit per key token. Empty = the causal pattern "
                                 "for the current text."),),
             sentence="custom: the pattern you wrote, row by row (1 = may look, 0 = may not)"),
)}
MASK_KINDS = tuple(MASKS)


def mask_kind(name: str) -> MaskKind:
    """The registry's entry for a kind name, or a clear error naming the kinds there are."""
    kind = MASKS.get((name or "none").strip().lower())
    if kind is None:
        raise AttnvizError(f"Unknown mask '{name}'. Choose one of: {', '.join(MASK_KINDS)}.")
    return kind


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
