"""attnviz.save_html: one self-contained HTML file with the widget's views: no network, no server, no Python."""

from __future__ import annotations

import base64
import html
from pathlib import Path

from attnviz.components.heatmap import component_css, component_js
from attnviz.errors import AttnvizError
from attnviz.notebook.content import drawn_document

# nothing from elsewhere: only the page's own inline script and style, and the images it makes itself (Download PNG)
POLICY = "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data: blob:"
PAGE = """<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="{policy}">
<title>{title}</title>
<style>
body {{ margin: 16px; background: #fff; }}
{css}
</style>
</head>
<body>
{preface}
<div id="attnviz-root"></div>
<script type="application/octet-stream" id="attnviz-document">{data}</script>
<script type="module">
{js}
</script>
</body>
</html>
"""


def page_html(document: bytes, title: str, preface: str = "") -> str:
    """The page: the document as base64 text, the app's heatmap JS with the page host, its CSS, nothing fetched.
    preface: HTML (already escaped) above the viewer, e.g. a lecture's record."""
    js = component_js("page")
    if "</script" in js.lower():  # would end the inline script early
        raise AttnvizError("The heatmap's JavaScript contains '</script' and cannot be inlined.")
    return PAGE.format(title=html.escape(title), policy=POLICY, css=component_css("page"), js=js,
                       data=base64.b64encode(document).decode("ascii"), preface=preface)


def save_html(res_or_attention=None, path=None, layer=None, heads=None, view: str = "heads", *, tokens=None,
              key_tokens=None, scores="auto", encoder_attentions=None, decoder_attentions=None, cross_attentions=None,
              encoder_tokens=None, decoder_tokens=None, encoder_attention=None, decoder_attention=None,
              cross_attention=None) -> Path:
    """Write one HTML file that opens in any browser with no network: the views of attnviz.show (the heads of each
    layer with a layer picker, or every layer × head with view="model"), hover, a click's arithmetic, PNG download.
    The arguments are show()'s, and path, the file to write. Returns the path written."""
    if path is None:
        raise AttnvizError("save_html needs the file to write: save_html(..., path='attention.html').")
    document, name = drawn_document(
        res_or_attention, layer=layer, heads=heads, view=view, scores=scores, tokens=tokens, key_tokens=key_tokens,
        encoder_attentions=encoder_attentions, decoder_attentions=decoder_attentions, cross_attentions=cross_attentions,
        encoder_tokens=encoder_tokens, decoder_tokens=decoder_tokens, encoder_attention=encoder_attention,
        decoder_attention=decoder_attention, cross_attention=cross_attention)
    out = Path(path)
    out.write_text(page_html(document, f"attnviz · {name}"), encoding="utf-8")
    return out
