"""Plotly figures of a fleet run: pure functions from report values to ``go.Figure``.

Inputs are what :mod:`ctxlab.corpus.report` returns (dicts per configuration, small frames
aggregated in DuckDB), so a figure's size depends on the number of configurations, never on
the number of conversations or calls. Labels reach a figure through
:func:`ctxlab.ui.text.hover_safe` (Plotly renders hover text as markup).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd
import plotly.graph_objects as go

from ctxlab.ui.text import hover_safe

__all__ = [
    "ecdf_figure",
    "pareto_figure",
    "pareto_front",
    "problems_figure",
    "retention_figure",
]

FONT_SIZE = 16
LEGEND_FONT_SIZE = 14
LEGEND_ROW_PX = 24
"""Pixels of one legend entry: the legend lists one configuration a row under the plot, so
its height is known and it never covers the axes, whatever the labels' lengths."""
PALETTE = (
    "#1565c0",
    "#ef6c00",
    "#2e7d32",
    "#8e24aa",
    "#c62828",
    "#00838f",
    "#6d4c41",
    "#546e7a",
    "#ad1457",
    "#9e9d24",
)
"""One colour per configuration, in the report's order, the same on every Fleet figure."""
SYMBOLS = ("circle", "square", "diamond", "triangle-up", "x", "star", "cross", "hexagon")


def colour_of(k: int) -> str:
    """The ``k``-th configuration's colour (the palette repeats after ten)."""
    return PALETTE[k % len(PALETTE)]


def _layout(fig: go.Figure, title: str, x: str, y: str) -> go.Figure:
    """A Fleet figure's layout: the title pinned on top; the legend a list under the x axis,
    one entry a row, with the figure made taller by as many rows (it covers nothing)."""
    entries = sum(1 for t in fig.data if t.showlegend is not False)
    legend_px = entries * LEGEND_ROW_PX + 10
    fig.update_layout(
        title={"text": title, "y": 1, "yref": "container", "yanchor": "top", "pad": {"t": 8}},
        xaxis_title=x,
        yaxis_title=y,
        font={"size": FONT_SIZE},
        margin={"l": 20, "r": 20, "t": 50, "b": 20 + legend_px},
        legend={
            "orientation": "v",
            "yref": "container",
            "y": 0,
            "yanchor": "bottom",
            "x": 0,
            "font": {"size": LEGEND_FONT_SIZE},
        },
        showlegend=entries > 0,
        height=430 + legend_px,
    )
    fig.update_xaxes(automargin=True)
    fig.update_yaxes(automargin=True)
    return fig


def pareto_front(points: Sequence[tuple[float, float]]) -> list[int]:
    """Indices of the points no other point beats: cheaper (x) and at least as retentive (y).

    A point is on the front when no other point has ``x <=`` and ``y >=`` with one strict.
    Returned in ascending cost.

    >>> pareto_front([(1.0, 50.0), (2.0, 90.0), (3.0, 80.0), (0.5, 40.0)])
    [3, 0, 1]
    """
    front = []
    for i, (x, y) in enumerate(points):
        beaten = any(
            (ox <= x and oy >= y) and (ox < x or oy > y)
            for j, (ox, oy) in enumerate(points)
            if j != i
        )
        if not beaten:
            front.append(i)
    return sorted(front, key=lambda i: (points[i][0], -points[i][1]))


def pareto_figure(report: Sequence[Mapping[str, Any]], *, with_cache: bool = False) -> go.Figure:
    """Cost against mean fact retention, one point per configuration, the front joined.

    Configurations without a cost or a retention are left out (said in the title).
    """
    cost_key = "cost_with_cache" if with_cache else "cost"
    usable = [r for r in report if r.get(cost_key) is not None and r.get("retention") is not None]
    points = [(float(r[cost_key]), float(r["retention"])) for r in usable]
    fig = go.Figure()
    order = {id(r): k for k, r in enumerate(report)}
    # One trace per configuration: the legend names each point (labels written beside the
    # points overprint each other and run out of the chart).
    for r, (cost, kept) in zip(usable, points, strict=True):
        k = order[id(r)]
        label = hover_safe(str(r["label"]))
        fig.add_trace(
            go.Scatter(
                x=[cost],
                y=[kept],
                mode="markers",
                marker={"size": 14, "color": colour_of(k), "symbol": SYMBOLS[k % len(SYMBOLS)]},
                name=label,
                hovertemplate=label + "<br>cost $%{x:,.2f}<br>retention %{y:.1f}%<extra></extra>",
            )
        )
    front = pareto_front(points)
    if len(front) > 1:
        fig.add_trace(
            go.Scatter(
                x=[points[i][0] for i in front],
                y=[points[i][1] for i in front],
                mode="lines",
                line={"color": "#2e7d32", "dash": "dash"},
                name="Pareto front",
                hoverinfo="skip",
            )
        )
    left = len(report) - len(usable)
    title = "Cost against fact retention" + (
        f" ({left} configuration(s) without a price or retention left out)" if left else ""
    )
    label = "Cost with prompt cache (USD)" if with_cache else "Cost without prompt cache (USD)"
    return _layout(fig, title, label, "Facts kept at the last call (mean %)")


def ecdf_figure(ecdf: pd.DataFrame, labels: Mapping[str, str]) -> go.Figure:
    """Tokens per call as an ECDF, one line per configuration (``config_key`` in ``labels``)."""
    fig = go.Figure()
    for k, (key, label) in enumerate(labels.items()):
        part = ecdf[ecdf["config_key"] == key]
        if part.empty:
            continue
        fig.add_trace(
            go.Scatter(
                x=part["tokens"],
                y=part["share"] * 100,
                mode="lines",
                line={"shape": "hv", "color": colour_of(k)},
                name=hover_safe(label),
                hovertemplate="%{x:,} tokens: %{y:.0f}% of calls at or under<extra></extra>",
            )
        )
    return _layout(fig, "Tokens sent per call (ECDF)", "Tokens sent", "Calls at or under (%)")


def retention_figure(stats: pd.DataFrame, labels: Mapping[str, str]) -> go.Figure:
    """Fact retention per conversation as one box per configuration.

    ``stats`` holds box statistics computed in SQL (columns config_key, low, q1, median, q3,
    high), so the figure is as small for 100,000 conversations as for ten.
    """
    fig = go.Figure()
    for k, (key, label) in enumerate(labels.items()):
        part = stats[stats["config_key"] == key]
        if part.empty:
            continue
        row = part.iloc[0]
        name = hover_safe(label)
        # x is the configuration's own position: without it every box stands at x = 0
        fig.add_trace(
            go.Box(
                name=name,
                x=[name],
                q1=[row["q1"]],
                median=[row["median"]],
                q3=[row["q3"]],
                lowerfence=[row["low"]],
                upperfence=[row["high"]],
                marker={"color": colour_of(k)},
            )
        )
    # the legend names the boxes (in their colours); long names under the boxes would collide
    fig.update_xaxes(showticklabels=False)
    return _layout(fig, "Fact retention per conversation", "", "Facts kept at the last call (%)")


def problems_figure(problems: pd.DataFrame, labels: Mapping[str, str]) -> go.Figure:
    """Validator problems by code, stacked per configuration."""
    fig = go.Figure()
    present = problems[problems["config_key"].isin(list(labels))]
    names = [hover_safe(labels[k]) for k in labels]
    for code in sorted(present["code"].unique()):
        part = present[present["code"] == code]
        counts = dict(zip(part["config_key"], part["problems"], strict=True))
        # configurations on the y axis: their names read horizontally at any width
        fig.add_trace(
            go.Bar(
                y=names,
                x=[int(counts.get(k, 0)) for k in labels],
                orientation="h",
                name=hover_safe(str(code)),
            )
        )
    fig.update_layout(barmode="stack")
    fig.update_yaxes(autorange="reversed")
    return _layout(fig, "Provider-validity problems (OpenAI rules)", "Problems over all calls", "")
