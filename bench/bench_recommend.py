"""Tune's sweep, timed: a session replay per value, facts at the last call, the recommendation.

Run ``python bench/bench_recommend.py`` (the coding sample and the generated 10k sample, every
built-in strategy's first token-or-message parameter, gpt-4o) or ``--samples NAME,...``
``--steps N``. Prints a markdown table; no assertions. Fact extraction is timed apart because
the app caches it per chat (the Playground's Facts tab and Compare share it); a sweep is cached
per chat, model, strategy and grid, so this is the cost of the first view and of a new range.
"""

from __future__ import annotations

import argparse
import os
import time

from ctxlab.catalog import get_model
from ctxlab.formats import load_chat
from ctxlab.insights import extract_facts
from ctxlab.recommend import Question, candidate_values, recommend, session_sweep
from ctxlab.samples import sample_path
from ctxlab.strategies import get_strategy_class, parameters, strategy_names, suggested_for
from ctxlab.tokens import get_counter
from ctxlab.ui.widgets import ChatScale, param_range


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--samples", default="coding_agent_session,large_agent_10k")
    parser.add_argument("--steps", type=int, default=12)
    parser.add_argument("--model", default="gpt-4o")
    args = parser.parse_args()
    model = get_model(args.model)
    counter = get_counter(model.name)
    print(
        f"model {model.name} (window {model.context_window:,}), {args.steps} values, "
        f"{os.cpu_count()} CPUs\n"
    )
    print(
        "| chat | messages | strategy | parameter | facts (s) | sweep (s) | per value (s) "
        "| recommendation (fits + 80% facts) |"
    )
    print("|---|---:|---|---|---:|---:|---:|---|")
    for name in args.samples.split(","):
        messages = load_chat(sample_path(name))
        counted = counter.counted(messages)
        started = time.perf_counter()
        facts = extract_facts(messages)
        facts_s = time.perf_counter() - started
        for sname in strategy_names():
            cls = get_strategy_class(sname)
            if cls.uses_summarizer:
                continue  # summarizing sweeps need a stand-in summarizer: see the Tune page
            info = next((i for i in parameters(cls) if i.kind == "int"), None)
            if info is None:
                continue
            strategy = suggested_for(cls, counted, model.input_room)
            rng = param_range(info, ChatScale.of(counted), window=model.context_window)
            log = info.spec.unit == "tokens"
            start = max(rng.lo, rng.hi // 100) if log else rng.lo  # as the Tune page starts
            values = candidate_values(start, rng.hi, args.steps, integer=True, log=log)
            started = time.perf_counter()
            points = session_sweep(
                messages,
                strategy,
                info.name,
                values,
                counter,
                model=model.name,
                facts=facts,
                window=model.context_window,
            )
            sweep_s = time.perf_counter() - started
            rec = recommend(
                points, Question.FITS_AND_KEEPS_FACTS, window=model.context_window, min_facts=0.8
            )
            answer = f"{rec.point.value:,g}" if rec.point else f"none: {rec.reason}"
            print(
                f"| {name} | {len(messages):,} | {sname} | {info.name} | {facts_s:.2f} "
                f"| {sweep_s:.2f} | {sweep_s / len(values):.3f} | {answer} |"
            )


if __name__ == "__main__":
    main()
