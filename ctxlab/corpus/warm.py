"""Preloaded by the process pool's fork server: the default tokenizer, loaded once.

Every pool worker forks from that server, so it starts with the ``o200k_base`` encoding
(gpt-4o, ctxlab's default model) already in memory, shared copy-on-write, instead of loading
it again (about 0.7 s and 75 MB a worker). Importing this module has that side effect on
purpose; nothing else imports it.
"""

from __future__ import annotations

from ctxlab.encodings import load_encoding

load_encoding("o200k_base")
