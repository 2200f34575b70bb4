"""``python -m ctxlab`` runs the ``ctxlab`` command; ``python -m ctxlab app`` starts the app."""

from ctxlab.cli import main

raise SystemExit(main())
