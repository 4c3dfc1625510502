"""Ship a site's learned confidence model as the prior (``postprocess/stages/confidence_prior.json``).

The prior serves sites with too few links of their own to learn from. It is fitted on
the Django documentation:

    python3 -m postprocess --crawl DJANGO_CRAWL --out DJANGO_OUT
    python3 benchmarks/fit_prior.py DJANGO_OUT/confidence.json "Django 3.2 documentation"
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

PRIOR = Path(__file__).resolve().parents[1] / "postprocess" / "stages" / "confidence_prior.json"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model", help="confidence.json of a finished run")
    parser.add_argument("site", help="what the model was fitted on, for the record")
    args = parser.parse_args()
    model = json.loads(Path(args.model).read_text())
    if model.get("source") != "site":
        raise SystemExit(f"{args.model} is not a site's own model (source: {model.get('source')})")
    report = model["report"]
    model["source"] = "prior"
    model["report"] = {"fitted_on": args.site, **{k: report[k] for k in ("links", "rows", "positives", "auc",
                                                                           "brier", "at_cut")}}
    PRIOR.write_text(json.dumps(model, indent=1) + "\n")
    print(f"wrote {PRIOR}")


if __name__ == "__main__":
    main()
