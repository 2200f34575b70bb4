"""A round map drawn as a static HTML strip, for a map that changes on every click.

A Plotly chart costs the browser about 0.1 s to redraw here, whatever its size: its own
fixed cost. The Replay's map of the context at a turn changes with every scrubber step, so
it is drawn as plain HTML instead (positioned blocks: ``st.html``'s sanitizer drops SVG): the
same blocks, colours, lines, legend and hover text as
the figure the round-map builders make (:func:`ctxlab.ui.figures.round_map_figure`,
:func:`ctxlab.ui.binned_map.binned_map_figure`), with the browser's own tooltips and no zoom.
Drawing from the figure keeps one builder, so both renderings show the same map.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import plotly.graph_objects as go

from ctxlab.ui.figures import TAIL_NOTE

STRIP_HEIGHT_PX = 56
_BORDER = {"dash": "dashed", "dot": "dotted", "dashdot": "dashed"}
_TAG = re.compile(r"<[^>]*>")


@dataclass(frozen=True, slots=True)
class Segment:
    """One block of the strip: ``tokens`` wide, starting ``base`` tokens into the chat."""

    base: float
    tokens: float
    hover: str


@dataclass(frozen=True, slots=True)
class Layer:
    """The segments of one legend entry (one bar trace of the figure)."""

    name: str
    colour: str
    outline: float
    segments: tuple[Segment, ...]


@dataclass(frozen=True, slots=True)
class Marker:
    """A budget or window line at ``x`` tokens, labelled ``text``; ``x`` is None when the line
    lies left of the strip (off scale: the label says so with an arrow and no line is drawn).
    ``left_end`` says the label starts at the strip's left end (else it ends at the right)."""

    x: float | None
    colour: str
    dash: str
    text: str
    left_end: bool
    hover: str = ""


def _exact(x: float) -> str:
    """``x`` written in full (``:g`` would round 1,234,567 to ``1.23457e+06``)."""
    return str(int(x)) if x.is_integer() else repr(x)


def plain_text(hover: str) -> str:
    """A Plotly hover string as tooltip text: ``<br>`` becomes a line break, other tags go,
    entities are decoded (the caller escapes the result again for the page)."""
    return html.unescape(_TAG.sub("", hover.replace("<br>", "\n")))


def _layers(fig: go.Figure) -> Iterator[Layer]:
    for trace in fig.data:
        if not isinstance(trace, go.Bar) or trace.orientation != "h":
            raise ValueError(f"a strip draws horizontal bars only, not {trace.type!r} traces")
        widths: Sequence[float] = trace.x or ()
        bases: Sequence[float] = trace.base if trace.base is not None else [0.0] * len(widths)
        hovers: Sequence[Any] = trace.customdata if trace.customdata is not None else ()
        line = trace.marker.line
        yield Layer(
            name=str(trace.name or ""),
            colour=str(trace.marker.color),
            outline=float(line.width or 0) if line is not None else 0.0,
            segments=tuple(
                Segment(float(b), float(w), plain_text(str(hovers[i])) if i < len(hovers) else "")
                for i, (b, w) in enumerate(zip(bases, widths, strict=True))
            ),
        )


def _markers(fig: go.Figure) -> list[Marker]:
    """The figure's budget and window lines across the strip, in label-row order: one per
    line label :func:`ctxlab.ui.figures.tail_marks` wrote on the first strip."""
    dashes = {
        float(shape.x0): str(shape.line.dash or "solid")
        for shape in fig.layout.shapes
        if shape.type == "line" and shape.xref == "x" and shape.x0 == shape.x1
    }
    out = []
    for note in fig.layout.annotations:
        if note.name != TAIL_NOTE or note.xref != "x":
            continue
        colour = str(note.font.color or "#000") if note.font is not None else "#000"
        text = str(note.text).replace("<br>", " ")  # HTML wraps the label where it must
        if note.showarrow:
            x = float(note.x)
            out.append(Marker(x, colour, dashes.get(x, "solid"), text, note.xanchor == "left"))
        else:
            out.append(Marker(None, colour, "solid", text, True, str(note.hovertext)))
    return out


def _span(layers: Sequence[Layer], fig: go.Figure) -> tuple[float, float]:
    fixed = fig.layout.xaxis.range
    if fixed is not None and fig.layout.xaxis.autorange is False:
        return float(fixed[0]), float(fixed[1])
    starts = [s.base for layer in layers for s in layer.segments]
    ends = [s.base + s.tokens for layer in layers for s in layer.segments]
    return (min(starts), max(ends)) if starts else (0.0, 1.0)


def _title_text(title: Any) -> str:
    text = getattr(title, "text", None)
    return str(text) if text else ""


def strip_html(fig: go.Figure, *, height_px: int = STRIP_HEIGHT_PX) -> str:
    """The round-map figure ``fig`` as one HTML block (for ``st.html``): its title, the strip
    (a ``<div data-name=…>`` per legend entry holding a ``<div data-tokens=…>`` per block, its
    hover text as the ``title`` tooltip), the vertical lines (``data-marker``) and their labels,
    the axis ends and title, and the legend. Positions are percentages of the strip's width.

    Raises:
        ValueError: a trace is not a horizontal bar trace (not a round map).
    """
    layers = list(_layers(fig))
    low, high = _span(layers, fig)
    scale = 100 / max(high - low, 1e-9)  # percent of the strip's width per token

    def pct(x: float) -> str:
        return f"{(x - low) * scale:.4f}%"

    title = _title_text(fig.layout.title)
    parts = [
        f'<figure data-strip="{html.escape(title or "round map")}" style="margin:0 0 1rem 0">',
        f'<figcaption style="font-weight:600;margin-bottom:0.25rem">{html.escape(title)}'
        "</figcaption>"
        if title
        else "",
    ]
    markers = _markers(fig)
    row_em = 1.5
    # Each label gets its own row (as on the Plotly map), starting at the strip's nearer end
    # and wrapping rather than running out of the strip in a narrow column.
    labels = "".join(
        f'<span data-strip-label title="{html.escape(m.hover or m.text)}" '
        f'style="position:absolute;top:{k * row_em}em;'
        f"{'left:0' if m.left_end else 'right:0'};max-width:100%;"
        f'padding:0 4px;color:{html.escape(m.colour)}">{html.escape(m.text)}</span>'
        for k, m in enumerate(markers)
        if m.text
    )
    parts.append(
        f'<div style="position:relative;height:{len(markers) * row_em}em;font-size:0.85em">'
        f"{labels}</div>"
        if labels
        else ""
    )
    parts.append(
        f'<div role="img" aria-label="{html.escape(title or "round map")}" '
        f'style="position:relative;height:{height_px}px">'
    )
    for layer in layers:
        edge = ";box-shadow:inset -1px 0 #fff" if layer.outline else ""
        parts.append(f'<div data-name="{html.escape(layer.name)}" style="display:contents">')
        parts.extend(
            f'<div data-tokens="{_exact(s.tokens)}" title="{html.escape(s.hover)}" '
            f'style="position:absolute;top:14%;bottom:14%;left:{pct(s.base)};'
            f"width:{s.tokens * scale:.4f}%;min-width:1px;"
            f'background:{html.escape(layer.colour)}{edge}"></div>'
            for s in layer.segments
        )
        parts.append("</div>")
    parts.extend(
        f'<div data-marker="{html.escape(m.text)}" style="position:absolute;top:0;bottom:0;'
        f"left:{pct(m.x)};border-left:2px {_BORDER.get(m.dash, 'solid')} "
        f'{html.escape(m.colour)}"></div>'
        for m in markers
        if m.x is not None
    )
    parts.append("</div>")
    axis = _title_text(fig.layout.xaxis.title)
    # The first round starts at 0; a block before it (the tool definitions) sits at negative x.
    start = max(low, 0.0)
    parts.append(
        # the axis ends, then its title on a line of its own: side by side they overlap in
        # a narrow column
        '<div style="display:flex;justify-content:space-between;font-size:0.8em;opacity:0.75;'
        f'padding-left:{pct(start)}"><span data-strip-label>{start:,.0f}</span>'
        f"<span data-strip-label>{high:,.0f} tokens</span></div>"
        '<div style="text-align:center;font-size:0.8em;opacity:0.75">'
        f"<span data-strip-label>{html.escape(axis)}</span></div>"
    )
    legend = "".join(
        '<span data-strip-label style="white-space:nowrap;margin-right:1rem;'
        f'display:inline-block"><span style="display:inline-block;'
        f"width:0.8em;height:0.8em;margin-right:0.3em;vertical-align:-0.05em;"
        f'background:{html.escape(layer.colour)}"></span>{html.escape(layer.name)}</span>'
        for layer in layers
        if layer.name and layer.segments
    )
    parts.append(f'<div style="font-size:0.85em;margin-top:0.25rem">{legend}</div>')
    parts.append("</figure>")
    return "".join(parts)
