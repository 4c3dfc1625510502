"""``python -m postprocess apply --wordpress URL``: write the editors' approved links into WordPress.

Reads the ``approved`` decisions, finds each source and target among the site's posts
and pages through the REST API (``?p=``/``?page_id=`` in the URL, else the slug, else
the full listing, 100 a request), reads each source post's stored markup
(``context=edit``), wraps the anchor's first occurrence in running text in a link to the
target's permalink (:mod:`.markup`) and, with ``--write``, updates the post — all rows of
one post in one update, ``--delay`` seconds between updates. Without ``--write`` it
prints a unified diff per post and changes nothing. A row that cannot be applied
(already linked, anchor gone or only in excluded places, page not in WordPress) is
reported and skipped; a post whose request fails is reported and the rest go on (exit
status 1). Every written post is logged (:mod:`.changelog`): ``--runs`` lists the runs,
``--undo RUN`` restores each post it changed unless the post was edited since
(``--force`` restores anyway). With ``--crawl DIR``, a post edited in WordPress after
the crawl fetched it is skipped (:mod:`.since`). Credentials come only from the environment:
``LINKSPIDER_WP_USER`` and ``LINKSPIDER_WP_APP_PASSWORD`` (an application password).
"""

from __future__ import annotations

import argparse
import difflib
import json
import os
import time
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from urllib.parse import parse_qs, unquote, urlsplit

from postprocess.apps.wordpress.changelog import ChangeLog
from postprocess.apps.wordpress.client import POST_TYPES, Post, WordPress, WordPressError, connect
from postprocess.apps.wordpress.markup import insert_link, same_page_key
from postprocess.apps.wordpress.since import edited_since, fetch_times
from postprocess.decisions.store import Decision, DecisionStore, default_path
from postprocess.errors import InputError

ENV_USER = "LINKSPIDER_WP_USER"
ENV_PASSWORD = "LINKSPIDER_WP_APP_PASSWORD"
#: Slugs asked for in one request (``?slug=a,b,c``).
SLUG_BATCH = 50


def recorded_crawl(out: Path) -> str | None:
    """The crawl folder the run in ``out`` read (summary.json's ``crawl``), when it still exists."""
    try:
        crawl = json.loads((out / "summary.json").read_text(encoding="utf-8")).get("crawl")
    except (OSError, ValueError, AttributeError):
        return None
    return crawl if isinstance(crawl, str) and Path(crawl).is_dir() else None


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--wordpress", metavar="URL", help="the WordPress site (its home page URL)")
    parser.add_argument("--out", default="data/out", help="output directory (default %(default)s)")
    parser.add_argument("--db", default=None,
                        help="decisions database (default: decisions.sqlite beside --out)")
    parser.add_argument("--write", action="store_true",
                        help="update the posts (default: a dry run printing a diff per post)")
    parser.add_argument("--undo", metavar="RUN", help="restore the posts an apply run changed")
    parser.add_argument("--force", action="store_true",
                        help="with --undo: restore posts edited since that run too")
    parser.add_argument("--runs", action="store_true", help="list the apply runs and exit")
    parser.add_argument("--crawl", default=None, metavar="DIR",
                        help="the crawl the suggestions came from: skip posts edited in WordPress after it "
                             "fetched them (default: the crawl --out's summary.json names, when it is there)")
    parser.add_argument("--delay", type=float, default=1.0,
                        help="seconds between two post updates (default %(default)s)")
    parser.add_argument("--timeout", type=float, default=30.0,
                        help="seconds to wait for one API request (default %(default)s)")


@dataclass(frozen=True)
class Found:
    """Where a URL lives in WordPress."""

    type_base: str
    id: int
    link: str


@dataclass
class Tally:
    """What a run did, row by row."""

    posts: int = 0
    links: int = 0
    skipped: int = 0
    failed: int = 0
    run_id: str = ""

    def row(self, status: str, decision: Decision, reason: str = "") -> None:
        if status == "skipped":
            self.skipped += 1
        elif status == "failed":
            self.failed += 1
        else:
            self.links += 1
        line = f"  {status}: \"{decision.anchor}\" -> {decision.target_url}"
        print(line + (f" ({reason})" if reason else ""), flush=True)


def credentials() -> tuple[str, str]:
    """User and application password from the environment; InputError naming what is missing."""
    user, password = os.environ.get(ENV_USER, "").strip(), os.environ.get(ENV_PASSWORD, "").strip()
    missing = [name for name, value in ((ENV_USER, user), (ENV_PASSWORD, password)) if not value]
    if missing:
        raise InputError(f"set {' and '.join(missing)} (a WordPress user and an application password) "
                         "in the environment; credentials are never taken from the command line")
    return user, password


def locate(wp: WordPress, urls: Iterable[str]) -> dict[str, Found]:
    """URL -> the post or page it is, for every URL WordPress knows (any spelling of the same page)."""
    wanted: dict[str, list[str]] = {}
    for url in urls:
        wanted.setdefault(same_page_key(url), []).append(url)
    found: dict[str, Found] = {}

    def take(type_base: str, items: list[dict]) -> None:
        for item in items:
            for url in wanted.get(same_page_key(str(item.get("link", ""))), []):
                found.setdefault(url, Found(type_base, int(item["id"]), str(item["link"])))

    ids: dict[str, list[str]] = {"posts": [], "pages": []}
    slugs: set[str] = set()
    for urls_of in wanted.values():
        parts = urlsplit(urls_of[0])
        query = parse_qs(parts.query)
        if "p" in query:
            ids["posts"] += query["p"]
        if "page_id" in query:
            ids["pages"] += query["page_id"]
        segment = unquote(parts.path.rstrip("/").rpartition("/")[2])
        if segment:
            slugs.add(segment.lower())
    for type_base in POST_TYPES:
        if ids[type_base]:
            take(type_base, wp.find(type_base, {"include": ",".join(ids[type_base])}))
        ordered = sorted(slugs)
        for i in range(0, len(ordered), SLUG_BATCH):
            take(type_base, wp.find(type_base, {"slug": ",".join(ordered[i:i + SLUG_BATCH])}))
    if any(url not in found for urls_of in wanted.values() for url in urls_of):
        for type_base in POST_TYPES:
            take(type_base, wp.find(type_base, {}))
    return found


def _diff(post: Post, after: str) -> str:
    lines = difflib.unified_diff(post.raw.splitlines(keepends=True), after.splitlines(keepends=True),
                                 fromfile=f"post {post.id} {post.link} (stored)",
                                 tofile=f"post {post.id} {post.link} (with links)")
    return "".join(line if line.endswith("\n") else line + "\n" for line in lines)


def _by_source(decisions: list[Decision]) -> dict[str, list[Decision]]:
    groups: dict[str, list[Decision]] = {}
    for decision in sorted(decisions, key=lambda d: (d.source_url, d.target_url)):
        groups.setdefault(decision.source_url, []).append(decision)
    return groups


def plan(post: Post, rows: list[Decision], found: dict[str, Found],
         tally: Tally) -> tuple[str, list[tuple[Decision, Found]]]:
    """The post's markup with every row's link that can go in, and those rows; the others reported."""
    content, applied = post.raw, []
    for row in rows:
        target = found.get(row.target_url)
        if target is None:
            tally.row("skipped", row, "target page is not a post or page of this WordPress")
            continue
        if not (row.anchor or "").strip():
            tally.row("skipped", row, "no anchor words")
            continue
        result = insert_link(content, row.anchor or "", target.link, row.context, base=post.link)
        if not result.linked:
            tally.row("skipped", row, result.reason)
            continue
        content = result.content
        applied.append((row, target))
    return content, applied


def apply(wp: WordPress, decisions: list[Decision], log: ChangeLog, *, write: bool, delay: float,
          fetched: dict[str, datetime] | None = None) -> Tally:
    """Plan every approved row, print the diffs, and with ``write`` update the posts and log them.

    ``fetched`` (URL -> when the crawl fetched it) skips posts edited in WordPress since then,
    unless the last edit was an apply run's own.
    """
    tally = Tally()
    groups = _by_source(decisions)
    try:
        found = locate(wp, {d.source_url for d in decisions} | {d.target_url for d in decisions})
    except WordPressError as exc:
        raise InputError(f"{wp.site}: listing its posts and pages failed, nothing written ({exc})") from None
    run_id = ""
    written = 0
    for source, rows in groups.items():
        where = found.get(source)
        print(f"{source}" + (f" (WordPress {where.type_base[:-1]} {where.id})" if where else ""), flush=True)
        if where is None:
            for row in rows:
                tally.row("skipped", row, "source page is not a post or page of this WordPress")
            continue
        if write and written and delay > 0:
            time.sleep(delay)  # before reading, so that the read and the update stay close together
        try:
            post = wp.post(where.type_base, where.id)
        except WordPressError as exc:
            for row in rows:
                tally.row("failed", row, f"reading post {where.id}: {exc}")
            continue
        if fetched is not None and edited_since(post.modified_gmt, fetched.get(source)) \
                and log.last_written(wp.site, post.id) != post.raw:
            for row in rows:
                tally.row("skipped", row, f"post edited since the crawl (modified {post.modified_gmt} UTC, "
                          f"fetched {fetched[source]:%Y-%m-%dT%H:%M:%S} UTC)")
            continue
        content, applied = plan(post, rows, found, tally)
        if not applied:
            continue
        print(_diff(post, content), end="", flush=True)
        if not write:
            tally.posts += 1
            for row, target in applied:
                tally.row("would link", row, _via(row, target))
            continue
        written += 1
        run_id = run_id or log.start(wp.site)
        try:
            updated = wp.update(post.type_base, post.id, content)
        except WordPressError as exc:
            updated = _written_anyway(wp, post, content)
            if updated is None:
                for row, _ in applied:
                    tally.row("failed", row, f"writing post {post.id}: {exc}")
                continue
        log.record(run_id, post.id, post.type_base, post.link, post.raw, updated.raw,
                   [{"source_url": r.source_url, "target_url": r.target_url, "anchor": r.anchor or "",
                     "href": t.link} for r, t in applied])
        tally.posts += 1
        for row, target in applied:
            tally.row("linked", row, _via(row, target))
    if run_id:
        log.finish(run_id, tally.posts, tally.links, tally.skipped, tally.failed)
        tally.run_id = run_id
    return tally


def _written_anyway(wp: WordPress, post: Post, content: str) -> Post | None:
    """The post when an update whose answer was lost (a timeout) did store ``content``, else None."""
    try:
        now = wp.post(post.type_base, post.id)
    except WordPressError:
        return None
    return now if now.raw == content != post.raw else None


def _via(row: Decision, target: Found) -> str:
    """The permalink the link points at, when it is not how the crawl spelled the target."""
    return "" if target.link == row.target_url else f"as {target.link}"


def undo(wp: WordPress, log: ChangeLog, run_id: str, *, force: bool, delay: float = 0.0) -> int:
    """Restore every post ``run_id`` changed; the number of posts that could not be restored."""
    run = log.run(run_id)
    if run is None:
        raise InputError(f"no apply run {run_id!r} in the decisions database (see apply --runs)")
    if same_page_key(str(run["site"])) != same_page_key(wp.site):
        raise InputError(f"apply run {run_id} wrote to {run['site']}, not to {wp.site}")
    changes = [c for c in log.changes(run_id) if c.undone_at is None]
    if not changes:
        raise InputError(f"apply run {run_id} has nothing left to undo (undone at {run['undone_at']})")
    failed = 0
    for i, change in enumerate(changes):
        if i and delay > 0:
            time.sleep(delay)
        try:
            post = wp.post(change.post_type, change.post_id)
            if post.raw != change.after and not force:
                print(f"post {change.post_id} {change.url} was edited since apply run {run_id}: not restored "
                      "(--force restores it anyway)", flush=True)
                failed += 1
                continue
            wp.update(change.post_type, change.post_id, change.before)
        except WordPressError as exc:
            print(f"post {change.post_id} {change.url}: failed: {exc}", flush=True)
            failed += 1
            continue
        log.undone(change)
        print(f"post {change.post_id} {change.url}: restored", flush=True)
    return failed


def list_runs(log: ChangeLog) -> None:
    runs = log.runs()
    if not runs:
        print("no apply runs yet")
    for r in runs:
        state = f"undone {r['undone_at']}" if r["undone_at"] else "" if r["finished_at"] else "unfinished"
        print(f"{r['run_id']}  {r['site']}  {r['started_at']}  posts {r['posts']}  links {r['links']}  "
              f"skipped {r['skipped']}  failed {r['failed']}  {state}".rstrip())


def run(args: argparse.Namespace) -> int:
    """The ``apply`` command: 0 when every post went through, 1 when one failed; InputError on bad input."""
    db = Path(args.db) if args.db else default_path(args.out)
    if args.runs:
        list_runs(ChangeLog(DecisionStore(db, create=False)))
        return 0
    if not args.wordpress:
        raise InputError("apply needs --wordpress URL (the site to write to)")
    if args.delay < 0 or args.timeout <= 0:
        raise InputError("--delay must be >= 0 and --timeout > 0")
    user, password = credentials()
    store = DecisionStore(db, create=False)
    log = ChangeLog(store)
    if args.undo:
        if log.run(args.undo) is None:
            raise InputError(f"no apply run {args.undo!r} in {db} (see apply --runs)")
        wp = connect(args.wordpress, user, password, args.timeout)
        failed = undo(wp, log, args.undo, force=args.force, delay=args.delay)
        print(f"undo {args.undo}: {'done' if not failed else f'{failed} posts not restored'}")
        return 1 if failed else 0
    decisions = store.decisions("approved")
    if not decisions:
        print(f"no approved rows in {db}: nothing to apply")
        return 0
    crawl = args.crawl or recorded_crawl(Path(args.out))
    fetched = fetch_times(crawl) if crawl else None
    wp = connect(args.wordpress, user, password, args.timeout)
    tally = apply(wp, decisions, log, write=args.write, delay=args.delay, fetched=fetched)
    counts = f"{tally.skipped} skipped, {tally.failed} failed"
    if tally.run_id:
        print(f"apply run {tally.run_id}: {tally.links} links written in {tally.posts} posts, {counts} "
              f"(undo: python -m postprocess apply --wordpress {args.wordpress} --undo {tally.run_id})")
    elif args.write:
        print(f"nothing written: {tally.links} links, {counts}")
    else:
        print(f"dry run: {tally.links} links in {tally.posts} posts would be written, {counts}; "
              "--write applies them")
    return 1 if tally.failed else 0
