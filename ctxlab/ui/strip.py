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
    """A vertical line at ``x`` tokens (a budget or window line), labelled ``text``."""

    x: float
    colour: str
    dash: str
    text: str
    right_of: bool


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
    """The figure's vertical lines across the strip, with the annotation placed at each."""
    notes = {(n.x, n.yref): n for n in fig.layout.annotations if n.xref == "x"}
    out = []
    for shape in fig.layout.shapes:
        if shape.type != "line" or shape.xref != "x" or shape.x0 != shape.x1:
            continue
        note = notes.get((shape.x0, "y domain"))
        out.append(
            Marker(
                x=float(shape.x0),
                colour=str(shape.line.color or "#000"),
                dash=str(shape.line.dash or "solid"),
                text=str(note.text) if note is not None else "",
                right_of=note is not None and note.xanchor == "left",
            )
        )
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
        '<figure style="margin:0 0 1rem 0">',
        f'<figcaption style="font-weight:600;margin-bottom:0.25rem">{html.escape(title)}'
        "</figcaption>"
        if title
        else "",
    ]
    markers = _markers(fig)
    labels = "".join(
        f'<span style="position:absolute;left:{pct(m.x)};'
        f"transform:translateX({'0' if m.right_of else '-100%'});white-space:nowrap;"
        f'padding:0 4px;color:{html.escape(m.colour)}">{html.escape(m.text)}</span>'
        for m in markers
        if m.text
    )
    parts.append(
        f'<div style="position:relative;height:1.4em;font-size:0.85em">{labels}</div>'
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
    )
    parts.append("</div>")
    axis = _title_text(fig.layout.xaxis.title)
    # The first round starts at 0; a block before it (the tool definitions) sits at negative x.
    start = max(low, 0.0)
    parts.append(
        '<div style="position:relative;height:1.4em;font-size:0.8em;opacity:0.75">'
        f'<span style="position:absolute;left:{pct(start)}">'
        f"{start:,.0f}</span>"
        f'<span style="position:absolute;left:50%;transform:translateX(-50%);'
        f'white-space:nowrap">{html.escape(axis)}</span>'
        f'<span style="position:absolute;right:0">{high:,.0f} tokens</span></div>'
    )
    legend = "".join(
        f'<span style="white-space:nowrap;margin-right:1rem"><span style="display:inline-block;'
        f"width:0.8em;height:0.8em;margin-right:0.3em;vertical-align:-0.05em;"
        f'background:{html.escape(layer.colour)}"></span>{html.escape(layer.name)}</span>'
        for layer in layers
        if layer.name and layer.segments
    )
    parts.append(f'<div style="font-size:0.85em;margin-top:0.25rem">{legend}</div>')
    parts.append("</figure>")
    return "".join(parts)
