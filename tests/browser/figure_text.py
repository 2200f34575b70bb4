"""Text boxes of the app's figures, measured in a real browser (issue 23: figures that stay
readable at any size).

:data:`TEXT_BOXES` collects the bounding box of every visible ``svg text`` of every Plotly chart
and of every label of the HTML round-map strip (``[data-strip-label]``), with the box of its
container (the chart, or the strip). :func:`text_problems` names every pair of boxes of one
figure that overlap and every box that sticks out of its container.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from playwright.sync_api import Page

TEXT_BOXES = """() => {
  const out = [];
  const visible = (el) => {
    const s = getComputedStyle(el);
    return s.visibility !== "hidden" && s.display !== "none" && Number(s.opacity) !== 0;
  };
  const box = (r) => ({left: r.left, top: r.top, right: r.right, bottom: r.bottom});
  document.querySelectorAll(".js-plotly-plot").forEach((plot, k) => {
    const frame = plot.getBoundingClientRect();
    if (frame.width === 0 || frame.height === 0) return;  // an unopened tab
    const title = (plot.querySelector(".gtitle") || {}).textContent || `chart ${k}`;
    const texts = [];
    plot.querySelectorAll("svg text").forEach((t) => {
      const text = (t.textContent || "").trim();
      if (!text || !visible(t)) return;  // Plotly keeps empty and hidden texts around
      // Plotly hides a text by an ancestor's opacity or display too
      for (let a = t.parentElement; a && a !== plot; a = a.parentElement) {
        if (!visible(a)) return;
      }
      const r = t.getBoundingClientRect();
      if (r.width === 0 || r.height === 0) return;
      texts.push({text, ...box(r)});
    });
    out.push({figure: title, kind: "plotly", frame: box(frame), texts});
  });
  document.querySelectorAll("[data-strip]").forEach((strip, k) => {
    const frame = strip.getBoundingClientRect();
    if (frame.width === 0) return;
    const texts = [];
    strip.querySelectorAll("[data-strip-label]").forEach((t) => {
      const text = (t.textContent || "").trim();
      const r = t.getBoundingClientRect();
      if (!text || r.width === 0) return;
      texts.push({text, ...box(r)});
    });
    out.push({figure: strip.getAttribute("data-strip") || `strip ${k}`, kind: "strip",
              frame: box(frame), texts});
  });
  return out;
}"""

SLACK_PX = 1.0
"""Sub-pixel rounding: boxes that touch or cross by less than this do not count."""


def _overlap(a: dict[str, Any], b: dict[str, Any]) -> bool:
    return (
        min(a["right"], b["right"]) - max(a["left"], b["left"]) > SLACK_PX
        and min(a["bottom"], b["bottom"]) - max(a["top"], b["top"]) > SLACK_PX
    )


def _inside(t: dict[str, Any], frame: dict[str, Any]) -> bool:
    return (
        t["left"] >= frame["left"] - SLACK_PX
        and t["right"] <= frame["right"] + SLACK_PX
        and t["top"] >= frame["top"] - SLACK_PX
        and t["bottom"] <= frame["bottom"] + SLACK_PX
    )


def text_problems(figures: Sequence[dict[str, Any]]) -> list[str]:
    """Every overlapping pair of texts of one figure and every text outside its figure."""
    problems: list[str] = []
    for fig in figures:
        texts = fig["texts"]
        for i, a in enumerate(texts):
            if not _inside(a, fig["frame"]):
                problems.append(f"{fig['figure']!r}: {a['text']!r} is clipped by its {fig['kind']}")
            for b in texts[i + 1 :]:
                if _overlap(a, b):
                    problems.append(f"{fig['figure']!r}: {a['text']!r} overlaps {b['text']!r}")
    return problems


def measure(page: Page) -> list[dict[str, Any]]:
    """The text boxes of every figure on the page (see :data:`TEXT_BOXES`)."""
    result: list[dict[str, Any]] = page.evaluate(TEXT_BOXES)
    return result
