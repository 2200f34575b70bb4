"""The Tune page's pieces: the session sweep cached per chat, model and strategy, and the figure
of the three curves a recommendation is read from (largest call, facts kept, session cost).

Every number comes from :mod:`ctxlab.recommend`; this module only caches and draws.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from ctxlab.catalog import ModelInfo
from ctxlab.recommend import Recommendation, SessionPoint
from ctxlab.strategies import Strategy
from ctxlab.summarizers import OfflineSummarizer, Summarizer
from ctxlab.ui.figures import (
    DECISION_COLOURS,
    FONT_SIZE,
    OFF_SCALE_UP,
    WINDOW_COLOUR,
    fit_axis,
    off_scale,
)
from ctxlab.ui.summary import Backend

__all__ = ["QUESTION_LABELS", "recommendation_figure", "sweep_summarizer"]

QUESTION_LABELS = {
    "fits-and-keeps-facts": "Smallest value that fits the window and keeps the facts",
    "cheapest": "Cheapest session with the prompt cache (that fits and keeps the facts)",
}
_RECOMMEND_COLOUR = "#2e7d32"


def sweep_summarizer(cls: type[Strategy], backend: Backend | None) -> tuple[Summarizer | None, str]:
    """The summarizer a sweep of ``cls`` runs with, and its name for the caption.

    None for a strategy that does not summarize. Otherwise the sidebar's backend when it runs
    without a button press (the offline one), else the offline summarizer: a sweep summarizes
    at every value, so it never calls an endpoint, and it never uses placeholders (a placeholder
    keeps no facts, which would make every value that summarizes look useless).
    """
    if not cls.uses_summarizer:
        return None, ""
    if backend is not None and backend.automatic:
        return backend.summarizer, backend.label
    return OfflineSummarizer(), "offline"


def recommendation_figure(
    points: Sequence[SessionPoint],
    *,
    parameter: str,
    model: ModelInfo | None,
    min_facts: float,
    recommendation: Recommendation | None = None,
    log_x: bool = False,
    height: int = 640,
) -> go.Figure:
    """Largest call (with the model's window), facts kept (with the chosen floor) and the
    session's cost with the prompt cache, against the parameter's value; the recommended value
    is a vertical line through all three. Every axis is titled."""
    titles = (
        "Largest call of the session",
        "Facts kept in the context sent for the whole chat",
        "Session cost with the prompt cache",
    )
    fig = make_subplots(rows=3, cols=1, shared_xaxes=True, subplot_titles=titles)
    x = [p.value for p in points]
    series: list[tuple[str, list[Any], str]] = [
        ("largest call (tokens)", [p.largest_call for p in points], DECISION_COLOURS["kept"]),
        (
            "facts kept (%)",
            [None if p.facts_kept is None else 100 * p.facts_kept for p in points],
            DECISION_COLOURS["pinned"],
        ),
        ("session cost (USD)", [p.cost_with_cache for p in points], "#ef6c00"),
    ]
    for row, (name, ys, colour) in enumerate(series, start=1):
        fig.add_trace(
            go.Scatter(
                name=name,
                x=x,
                y=ys,
                mode="lines+markers",
                line={"color": colour, "width": 3},
                marker={"size": 8},
                hovertemplate=f"{parameter} %{{x:,}}<br>{name} %{{y:,.4~f}}<extra></extra>",
            ),
            row=row,
            col=1,
        )
        fig.update_yaxes(title_text=name, rangemode="tozero", row=row, col=1)
    largest = max([p.largest_call for p in points], default=0)
    window_shown = model is not None and not off_scale(model.context_window, largest)
    # The axis fits the calls: a window far above them would flatten the curve against 0.
    top_calls = fit_axis(largest, [model.context_window] if model is not None else [])
    fig.update_yaxes(range=[0, top_calls], row=1, col=1)
    if model is not None and window_shown:
        fig.add_hline(
            y=model.context_window,
            line={"color": WINDOW_COLOUR, "dash": "dot", "width": 2},
            annotation_text=model.window_label(),
            annotation_font_size=FONT_SIZE,
            row=1,
            col=1,
        )
    elif model is not None:
        fig.add_annotation(
            text=f"{OFF_SCALE_UP}{model.window_label()} (off scale, above every call)",
            xref="x domain",
            yref="y domain",
            # top left: the curves rise with the value, so that corner stays clear
            x=0.0,
            y=1.0,
            xanchor="left",
            yanchor="top",
            showarrow=False,
            font={"size": FONT_SIZE, "color": WINDOW_COLOUR},
        )
    fig.add_hline(
        y=100 * min_facts,
        line={"color": DECISION_COLOURS["pinned"], "dash": "dot", "width": 2},
        annotation_text=f"keep at least {min_facts:.0%}",
        annotation_position="top left",  # the right end is where the facts curve reaches 100%
        annotation_font_size=FONT_SIZE,
        row=2,
        col=1,
    )
    fig.update_yaxes(range=[0, 105], row=2, col=1)
    fig.update_yaxes(tickprefix="$", row=3, col=1)
    if recommendation is not None and recommendation.point is not None:
        value = recommendation.point.value
        tops = (
            top_calls,
            100.0,
            max([p.cost_with_cache or 0.0 for p in points]),
        )
        # A vertical line as a trace: data coordinates on linear and log axes alike.
        for row, top in enumerate(tops, start=1):
            fig.add_trace(
                go.Scatter(
                    x=[value, value],
                    y=[0, top],
                    mode="lines",
                    line={"color": _RECOMMEND_COLOUR, "dash": "dash", "width": 2},
                    name="recommended",
                    hovertemplate=f"recommended {parameter} {value:,g}<extra></extra>",
                ),
                row=row,
                col=1,
            )
        fig.add_annotation(
            x=math.log10(value) if log_x else value,
            y=1.0,
            xref="x",
            yref="paper",
            yanchor="bottom",
            text=f"recommended {value:,g}",
            showarrow=False,
            font={"size": FONT_SIZE, "color": _RECOMMEND_COLOUR},
        )
    fig.update_annotations(font_size=FONT_SIZE)
    fig.update_xaxes(title_text=parameter, row=3, col=1)
    if log_x:
        fig.update_xaxes(type="log")
    fig.update_layout(showlegend=False, height=height, margin={"t": 60, "b": 40, "l": 60, "r": 20})
    return fig
