"""Texts per second of the page model on a GPU machine that cannot download anything.

The bundled model is 87 MB in float32; a half-precision copy (what `--device cuda` runs anyway)
and 512 real page texts travel with the working tree:

    python3 benchmarks/device_texts.py prepare --crawl CRAWL --dir .gpu      # here (.gpu/ ignored)
    python3 benchmarks/device_texts.py measure --dir .gpu --count 16384     # there, OUT=folder
    python3 benchmarks/device_texts.py compare --dir .gpu --vectors OUT/vectors.npy   # here

`measure` loads the copy through `postprocess.stages.embed.load_model(..., "auto")` — the
pipeline's own device choice, half precision and batch floor — and times `Embedder.encode`;
`compare` embeds the same 512 texts here in float32 on the CPU and reports the cosine of each
pair of vectors and the agreement of their ten nearest neighbours.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
TEXTS = "texts.json"
MODEL = "all-MiniLM-L6-v2-fp16"


def prepare(crawl: Path, folder: Path, count: int = 512) -> None:
    import pyarrow.dataset as ds
    from sentence_transformers import SentenceTransformer

    from postprocess.stages.embed import bundled_model_dir

    folder.mkdir(parents=True, exist_ok=True)
    model = SentenceTransformer(str(bundled_model_dir()), device="cpu", local_files_only=True)
    model.half()
    model.save(str(folder / MODEL))
    column = ds.dataset(crawl / "pages").to_table(columns=["text"])["text"].to_pylist()
    texts = [t[:1200] for t in column if t and len(t) > 200][:count]
    (folder / TEXTS).write_text(json.dumps(texts))
    print(f"{folder}: {len(texts)} texts and {MODEL}")


def measure(folder: Path, count: int) -> None:
    import torch

    from postprocess.stages.embed import load_model

    base = json.loads((folder / TEXTS).read_text())
    texts = (base * (count // len(base) + 1))[:count]
    model = load_model(str(folder / MODEL), None, "auto")
    cuda = model.device == "cuda"
    name = torch.cuda.get_device_name(0) if cuda else "cpu"
    model.encode(texts[:512], 64)  # warm up
    for batch in (64, 256, 1024) if cuda else (64,):
        if cuda:
            torch.cuda.synchronize()
        started = time.perf_counter()
        model.encode(texts, batch)
        if cuda:
            torch.cuda.synchronize()
        seconds = time.perf_counter() - started
        print(json.dumps({"device": model.device, "name": name, "torch": torch.__version__,
                          "batch": max(batch, 256) if cuda else batch, "texts": len(texts),
                          "seconds": round(seconds, 3), "texts_per_second": round(len(texts) / seconds, 1)}))
    np.save(Path(os.environ.get("OUT", folder)) / "vectors.npy", model.encode(base, 256))


def compare(folder: Path, vectors: Path) -> None:
    from postprocess.stages.embed import load_model

    texts = json.loads((folder / TEXTS).read_text())
    model = load_model(None, None, "cpu")
    started = time.perf_counter()
    here = model.encode(texts, 64)
    seconds = time.perf_counter() - started
    there = np.load(vectors).astype(np.float32)
    there /= np.linalg.norm(there, axis=1, keepdims=True)
    cosine = (here * there).sum(axis=1)

    def nearest(v: np.ndarray, k: int = 10) -> np.ndarray:
        sims = v @ v.T
        np.fill_diagonal(sims, -np.inf)
        return np.argsort(-sims, axis=1)[:, :k]

    overlap = np.mean([len(set(a) & set(b)) / 10 for a, b in zip(nearest(here), nearest(there), strict=True)])
    print(json.dumps({"cpu_texts_per_second": round(len(texts) / seconds, 1), "texts": len(texts),
                      "cosine_min": round(float(cosine.min()), 5),
                      "cosine_mean": round(float(cosine.mean()), 6),
                      "top10_overlap": round(float(overlap), 4)}))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("prepare")
    p.add_argument("--crawl", type=Path, required=True)
    p.add_argument("--dir", type=Path, default=Path(".gpu"))
    m = sub.add_parser("measure")
    m.add_argument("--dir", type=Path, default=Path(".gpu"))
    m.add_argument("--count", type=int, default=16384)
    c = sub.add_parser("compare")
    c.add_argument("--dir", type=Path, default=Path(".gpu"))
    c.add_argument("--vectors", type=Path, required=True)
    args = parser.parse_args()
    if args.command == "prepare":
        prepare(args.crawl, args.dir)
    elif args.command == "measure":
        measure(args.dir, args.count)
    else:
        compare(args.dir, args.vectors)


if __name__ == "__main__":
    main()
