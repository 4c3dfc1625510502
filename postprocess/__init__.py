"""postprocess: turn a crawl's Parquet dataset into a ranked review queue of internal links."""

from __future__ import annotations

__all__ = ["__version__"]
__version__ = "0.1.0"
