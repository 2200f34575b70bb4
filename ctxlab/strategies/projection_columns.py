"""ProjectionColumns: the projections of many prefixes of one chat, as integer columns.

A replay of a 100,000-message chat asks a projection strategy about 44,000 prefixes; a
strategy that can answer with arrays (one numpy pass per column) lets the replay cost every
call with array arithmetic instead of one Python object per call.

The hook is optional and duck-typed: a strategy that defines
``project_columns(chat, stops) -> ProjectionColumns`` (returning what ``project_many`` would,
for edit-free, described projections) is replayed through it by :func:`ctxlab.replay.replay`;
:class:`~ctxlab.strategies.window_drop.WindowDrop` does.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np

__all__ = ["ProjectionColumns"]


@dataclass(frozen=True, slots=True)
class ProjectionColumns:
    """Row ``i`` is :class:`~ctxlab.strategies.base.Projection` ``(messages_sent[i],
    tokens_sent[i], start[i], end[i], pinned[i])`` of the ``i``-th stop asked about: each
    context is described (``start`` set) and has no edits (stand-ins). Equal-length int64
    arrays."""

    messages_sent: np.ndarray
    tokens_sent: np.ndarray
    start: np.ndarray
    end: np.ndarray
    pinned: np.ndarray
