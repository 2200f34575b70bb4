"""ctxlab's version, from one source: the installed distribution's metadata, which the build
takes from pyproject.toml's ``version``. ``ctxlab.__version__`` and ``ctxlab --version`` read it
here (on first use: looking the distribution up costs a scan of ``sys.path``)."""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version

__all__ = ["__version__"]

try:
    __version__: str = version("ctxlab")
except PackageNotFoundError:  # a source tree on sys.path that was never installed
    __version__ = "0+unknown"
