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


def _layout(fig: go.Figure, title: str, x: str, y: str) -> go.Figure:
    fig.update_layout(
        title=title,
        xaxis_title=x,
        yaxis_title=y,
        font={"size": FONT_SIZE},
        margin={"l": 60, "r": 20, "t": 60, "b": 60},
        legend={"orientation": "h", "y": -0.25},
        height=430,
    )
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
    fig.add_trace(
        go.Scatter(
            x=[p[0] for p in points],
            y=[p[1] for p in points],
            mode="markers+text",
            text=[hover_safe(str(r["label"])) for r in usable],
            textposition="top center",
            marker={"size": 14, "color": "#1565c0"},
            name="configuration",
            hovertemplate="%{text}<br>cost $%{x:,.2f}<br>retention %{y:.1f}%<extra></extra>",
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
    for key, label in labels.items():
        part = ecdf[ecdf["config_key"] == key]
        if part.empty:
            continue
        fig.add_trace(
            go.Scatter(
                x=part["tokens"],
                y=part["share"] * 100,
                mode="lines",
                line={"shape": "hv"},
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
    for key, label in labels.items():
        part = stats[stats["config_key"] == key]
        if part.empty:
            continue
        row = part.iloc[0]
        fig.add_trace(
            go.Box(
                name=hover_safe(label),
                q1=[row["q1"]],
                median=[row["median"]],
                q3=[row["q3"]],
                lowerfence=[row["low"]],
                upperfence=[row["high"]],
            )
        )
    fig.update_layout(showlegend=False)
    return _layout(fig, "Fact retention per conversation", "", "Facts kept at the last call (%)")


def problems_figure(problems: pd.DataFrame, labels: Mapping[str, str]) -> go.Figure:
    """Validator problems by code, stacked per configuration."""
    fig = go.Figure()
    present = problems[problems["config_key"].isin(list(labels))]
    for code in sorted(present["code"].unique()):
        part = present[present["code"] == code]
        counts = dict(zip(part["config_key"], part["problems"], strict=True))
        fig.add_trace(
            go.Bar(
                x=[hover_safe(labels[k]) for k in labels],
                y=[int(counts.get(k, 0)) for k in labels],
                name=hover_safe(str(code)),
            )
        )
    fig.update_layout(barmode="stack")
    return _layout(fig, "Provider-validity problems (OpenAI rules)", "", "Problems over all calls")
