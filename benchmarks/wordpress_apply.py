"""``apply --wordpress`` on a real WordPress filled with The Kitchen Ledger: timings and a round trip.

Starts the site (tests/wordpress_site.py), approves ``--rows-per-post`` rows in each of
``--posts`` posts (seeded: whole-word phrases from their paragraphs, other posts as
targets), then runs, as a user would: the dry run, ``--write``, ``--write`` again (must
change nothing) and ``--undo`` (every post must be byte-identical to before). Prints the
seconds of each and the counts. ``--delay 0``: the default one second between updates
would add (posts - 1) seconds.

    python benchmarks/wordpress_apply.py --posts 100
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import sys
import tempfile
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from timing import timed  # noqa: E402
from wordpress_site import WordPressSite, missing, wordpress_site  # noqa: E402

from postprocess.apps.wordpress.markup import Markup  # noqa: E402
from postprocess.decisions.store import DecisionStore  # noqa: E402

PHRASE = re.compile(r"(?<![\w\-])[a-z]{5,} [a-z]{4,}(?![\w\-])")


def all_posts(site: WordPressSite) -> list[dict]:
    posts, page = [], 1
    while True:
        req = urllib.request.Request(f"{site.api}wp/v2/posts?context=edit&per_page=100&page={page}",
                                     headers={"Authorization": site.authorization()})
        with urllib.request.urlopen(req, timeout=60) as resp:
            posts += json.loads(resp.read())
            if page >= int(resp.headers["X-WP-TotalPages"]):
                return posts
        page += 1


def approve(posts: list[dict], db: Path, n_posts: int, per_post: int, seed: int) -> int:
    rng = random.Random(seed)
    store = DecisionStore(db)
    rows = 0
    for source in rng.sample(posts, min(n_posts, len(posts))):
        markup = Markup(source["content"]["raw"])
        running = "".join(c if ch.allowed else "\x00"
                          for c, ch in zip(markup.text, markup.chars, strict=True))
        phrases = sorted(set(PHRASE.findall(running)))
        targets = rng.sample([p for p in posts if p["id"] != source["id"]], per_post)
        for phrase, target in zip(rng.sample(phrases, min(per_post, len(phrases))), targets, strict=False):
            store.decide(source["link"], target["link"], "approved", anchor=phrase)
            rows += 1
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--posts", type=int, default=100)
    parser.add_argument("--rows-per-post", type=int, default=2)
    parser.add_argument("--seed", type=int, default=2)
    args = parser.parse_args()
    if missing():
        sys.exit(f"WordPress cannot run here: {missing()}")
    with tempfile.TemporaryDirectory(prefix="wp-apply-bench-") as tmp, \
            wordpress_site(Path(tmp) / "site") as site:
        posts = all_posts(site)
        db = Path(tmp) / "decisions.sqlite"
        rows = approve(posts, db, args.posts, args.rows_per_post, args.seed)
        before = {p["id"]: p["content"]["raw"] for p in posts}
        os.environ.update(LINKSPIDER_WP_USER=site.user, LINKSPIDER_WP_APP_PASSWORD=site.app_password)
        apply = [sys.executable, "-m", "postprocess", "apply", "--wordpress", site.url, "--db", str(db),
                 "--delay", "0"]
        print(f"{len(posts)} posts in the site, {rows} approved rows in {args.posts} posts")
        run_id = ""
        for name, extra in (("dry run", []), ("--write", ["--write"]), ("--write again", ["--write"])):
            wall, rss, done = timed(apply + extra, name)
            last = done.stdout.strip().splitlines()[-1]
            run_id = run_id or (last.split("apply run ", 1)[1].split(":")[0] if "apply run" in last else "")
            print(f"{name:14} {wall:6.1f} s  {rss / 1024:5.0f} MB  {last[:110]}")
        wall, rss, done = timed(apply + ["--undo", run_id], "--undo")
        print(f"{'--undo':14} {wall:6.1f} s  {rss / 1024:5.0f} MB  {done.stdout.strip().splitlines()[-1]}")
        after = {p["id"]: p["content"]["raw"] for p in all_posts(site)}
        same = sum(after[i] == raw for i, raw in before.items())
        print(f"after undo: {same} of {len(before)} posts byte-identical")
        return 0 if same == len(before) else 1


if __name__ == "__main__":
    sys.exit(main())
