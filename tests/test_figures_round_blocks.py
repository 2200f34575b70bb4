"""The round map's blocks, computed from per-chat tables (issue 15), equal the blocks of the
straightforward definition: one Counter per round, runs merged, then binned.

The oracle below is the definition the round map had before it was made flat in cost; the fast
:func:`ctxlab.ui.figures.round_blocks` must give the very same blocks, whatever the chat, the
decisions, the block limit and the range of rounds.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence

from chatgen import chats
from hypothesis import given
from hypothesis import strategies as st

from ctxlab.model import Message, Role
from ctxlab.strategies import Decision
from ctxlab.tokens import TokenCounter
from ctxlab.ui import figures
from ctxlab.ui.figures import MIXED, RoundBlock


def _merge(blocks: Sequence[RoundBlock]) -> RoundBlock:
    roles: Counter[str] = Counter()
    split: Counter[str] = Counter()
    for b in blocks:
        roles.update(dict(b.roles))
        split.update(dict(b.decisions))
    decisions = {b.decision for b in blocks}
    return RoundBlock(
        blocks[0].first,
        blocks[-1].last,
        blocks[0].start,
        blocks[-1].stop,
        sum(b.tokens for b in blocks),
        decisions.pop() if len(decisions) == 1 else MIXED,
        tuple(sorted(roles.items())),
        blocks[0].preview,
        tuple(sorted(split.items())),
    )


def oracle_blocks(
    counts: Sequence[int],
    messages: Sequence[Message],
    starts: Sequence[int],
    decisions: Mapping[str, Decision],
    max_blocks: int,
    rounds: tuple[int, int] | None = None,
) -> list[RoundBlock]:
    stops = (*starts[1:], len(messages))
    lo, hi = (0, len(starts)) if rounds is None else rounds
    blocks = []
    for k in range(max(lo, 0), min(hi, len(starts))):
        a, b = starts[k], stops[k]
        split = Counter(decisions.get(messages[i].id, Decision.KEPT).value for i in range(a, b))
        roles = Counter(messages[i].role.value for i in range(a, b))
        lead = next((messages[i] for i in range(a, b) if messages[i].role == Role.USER), None)
        blocks.append(
            RoundBlock(
                k,
                k,
                a,
                b,
                sum(counts[a:b]),
                next(iter(split)) if len(split) == 1 else MIXED,
                tuple(sorted(roles.items())),
                (lead or messages[a]).preview(100),
                tuple(sorted(split.items())),
            )
        )
    if len(blocks) <= max_blocks:
        return blocks
    runs: list[list[RoundBlock]] = []
    for block in blocks:
        if runs and runs[-1][-1].decision == block.decision:
            runs[-1].append(block)
        else:
            runs.append([block])
    merged = [_merge(run) for run in runs]
    if len(merged) <= max_blocks:
        return merged
    size = -(-len(merged) // max_blocks)
    return [_merge(merged[i : i + size]) for i in range(0, len(merged), size)]


@given(
    chat=chats(max_turns=10),
    data=st.data(),
    max_blocks=st.integers(1, 8),
)
def test_fast_round_blocks_equal_the_definition(
    counter: TokenCounter, chat: tuple[Message, ...], data: st.DataObject, max_blocks: int
) -> None:
    counted = counter.counted(chat)
    picks = data.draw(
        st.lists(st.sampled_from([*Decision, None]), min_size=len(chat), max_size=len(chat))
    )
    decisions = {m.id: d for m, d in zip(chat, picks, strict=True) if d is not None}
    n = len(counted.starts)
    lo = data.draw(st.integers(0, n))
    rounds = data.draw(st.sampled_from([None, (lo, data.draw(st.integers(lo, n + 2)))]))
    expected = oracle_blocks(
        counted.counts, counted.messages, counted.starts, decisions, max_blocks, rounds
    )
    assert figures.round_blocks(counted, decisions, max_blocks, rounds=rounds) == expected


def test_a_binned_round_map_still_counts_every_decision(counter: TokenCounter) -> None:
    """50,000 rounds in at most MAX_BLOCKS bars: every message's decision is in some block's
    split, and the totals per decision equal the decisions given."""
    rounds = 50_000
    chat = tuple(
        m
        for k in range(rounds)
        for m in (Message(Role.USER, "q", f"u{k}"), Message(Role.ASSISTANT, "a", f"a{k}"))
    )
    counted = counter.counted(chat)
    cycle = (Decision.DROPPED, Decision.KEPT, Decision.CLEARED, Decision.SUMMARIZED)
    decisions = {m.id: cycle[(i // 3) % 4] for i, m in enumerate(chat)}
    fig = figures.round_map_figure(counted, decisions)
    assert sum(len(trace.x) for trace in fig.data) <= figures.MAX_BLOCKS
    blocks = figures.round_blocks(counted, decisions)
    totals: Counter[str] = Counter()
    for block in blocks:
        totals.update(dict(block.decisions))
    assert totals == Counter(d.value for d in decisions.values())
    assert sum(b.tokens for b in blocks) == sum(counted.counts)
    assert [b.first for b in blocks[1:]] == [b.last + 1 for b in blocks[:-1]]
