"""``python -m postprocess apply --wordpress``: approved links written into a real WordPress.

Each test makes its own posts in the shared session site (the Kitchen Ledger posts are left alone)
and its own decisions database; the command runs in-process through ``postprocess.cli.main``.
"""

from __future__ import annotations

import json
import secrets
import subprocess
import sys
import urllib.request
from datetime import UTC, datetime
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from wordpress_site import REPO, WordPressSite, free_port

from postprocess.cli import main
from postprocess.decisions.store import DecisionStore


def para(text: str) -> str:
    return f"<!-- wp:paragraph -->\n<p>{text}</p>\n<!-- /wp:paragraph -->"


@pytest.fixture
def env(wordpress: WordPressSite, monkeypatch: pytest.MonkeyPatch) -> WordPressSite:
    monkeypatch.setenv("LINKSPIDER_WP_USER", wordpress.user)
    monkeypatch.setenv("LINKSPIDER_WP_APP_PASSWORD", wordpress.app_password)
    return wordpress


def post(site: WordPressSite, title: str, content: str) -> tuple[int, str]:
    """A new post with a unique slug: (id, permalink)."""
    slug = f"apply-{title.lower().replace(' ', '-')}-{secrets.token_hex(3)}"
    post_id = site.create_post(title, content, slug=slug)
    return post_id, site.permalink(post_id)


def api_post(site: WordPressSite, post_id: int) -> dict:
    req = urllib.request.Request(f"{site.api}wp/v2/posts/{post_id}?context=edit",
                                 headers={"Authorization": site.authorization()})
    with urllib.request.urlopen(req, timeout=30) as resp:
        return json.loads(resp.read())


def apply(site_url: str, db: Path, *args: str, capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(["apply", "--wordpress", site_url, "--db", str(db), "--delay", "0", *args])
    out, err = capsys.readouterr()
    return code, out, err


def test_dry_run_write_again_and_undo(env: WordPressSite, tmp_path: Path, capsys):
    site = env
    rye, rye_url = post(site, "Rye loaf", para("All about rye."))
    starter, starter_url = post(site, "Starter guide", para("Starter."))
    crumb, crumb_url = post(site, "Crumb", para("Crumb."))
    gone, gone_url = post(site, "Gone", para("Gone."))
    source_raw = ("<!-- wp:heading -->\n<h2>Crumb shots</h2>\n<!-- /wp:heading -->\n\n"
                  + para("Feed your <em>sour</em>dough starter daily. A rye loaf is nice.") + "\n\n"
                  + para(f'Read <a href="{crumb_url}">about crumb</a>. A rye loaf again.'))
    source, source_url = post(site, "Starter care", source_raw)
    db = tmp_path / "decisions.sqlite"
    store = DecisionStore(db)
    store.decide(source_url, rye_url, "approved", anchor="Rye Loaf", context="A rye loaf again.")
    store.decide(source_url, starter_url.rstrip("/"), "approved", anchor="sourdough starter")
    store.decide(source_url, crumb_url, "approved", anchor="crumb shots")  # already linked
    store.decide(source_url, gone_url, "approved", anchor="words no longer there")
    store.decide(source_url, rye_url + "x/", "rejected", anchor="rye")

    code, out, err = apply(site.url, db, capsys=capsys)
    assert code == 0, err
    assert "\n-<p>Feed your <em>sour</em>dough starter daily. A rye loaf is nice.</p>\n" in out
    assert (f'+<p>Read <a href="{crumb_url}">about crumb</a>. A <a href="{rye_url}">rye loaf</a> again.</p>'
            in out)
    assert f'+<p>Feed your <a href="{starter_url}"><em>sour</em>dough starter</a> daily.' in out
    assert "already linked" in out and "anchor not in the post" in out
    assert "dry run: 2 links in 1 posts would be written, 2 skipped, 0 failed" in out
    assert site.raw_content(source) == source_raw  # a dry run changes nothing
    assert main(["apply", "--db", str(db), "--runs"]) == 0
    assert "no apply runs yet" in capsys.readouterr().out

    code, out, err = apply(site.url, db, "--write", capsys=capsys)
    assert code == 0, err
    expected = (source_raw.replace("Feed your <em>sour</em>dough starter",
                                   f'Feed your <a href="{starter_url}"><em>sour</em>dough starter</a>')
                .replace("A rye loaf again", f'A <a href="{rye_url}">rye loaf</a> again'))
    assert site.raw_content(source) == expected
    stored = api_post(site, source)
    assert stored["content"]["raw"] == expected
    assert f'<a href="{rye_url}">rye loaf</a>' in stored["content"]["rendered"]
    run_id = out.split("apply run ", 1)[1].split(":", 1)[0]
    assert "2 links written in 1 posts, 2 skipped, 0 failed" in out
    assert site.raw_content(rye) == para("All about rye.")  # only the source changes

    code, out, err = apply(site.url, db, "--write", capsys=capsys)
    assert code == 0, err
    assert out.count("already linked") == 3 and "nothing written" in out
    assert site.raw_content(source) == expected

    assert main(["apply", "--db", str(db), "--runs"]) == 0
    runs = capsys.readouterr().out
    assert run_id in runs and "links 2" in runs and len(runs.strip().splitlines()) == 1

    code, out, err = apply(site.url, db, "--undo", run_id, capsys=capsys)
    assert code == 0, err
    assert site.raw_content(source) == source_raw  # byte-identical
    code, out, err = apply(site.url, db, "--undo", run_id, capsys=capsys)
    assert code == 2 and "nothing left to undo" in err and len(err.strip().splitlines()) == 1


def test_undo_refuses_a_post_edited_since_unless_forced(env: WordPressSite, tmp_path: Path, capsys):
    site = env
    target, target_url = post(site, "Proofing", para("Proofing."))
    raw = para("Proofing basket tips.")
    source, source_url = post(site, "Baskets", raw)
    db = tmp_path / "decisions.sqlite"
    DecisionStore(db).decide(source_url, target_url, "approved", anchor="proofing basket")
    code, out, err = apply(site.url, db, "--write", capsys=capsys)
    assert code == 0, err
    run_id = out.split("apply run ", 1)[1].split(":", 1)[0]
    addition = "\\n\\n<!-- wp:paragraph -->\\n<p>An editor's new paragraph.</p>\\n<!-- /wp:paragraph -->"
    site.php(f"wp_update_post(['ID' => {source}, "
             f"'post_content' => wp_slash(get_post({source})->post_content . \"{addition}\")]);")
    edited = site.raw_content(source)

    code, out, err = apply(site.url, db, "--undo", run_id, capsys=capsys)
    assert code == 1
    assert f"post {source} {source_url} was edited since apply run {run_id}: not restored" in out
    assert site.raw_content(source) == edited

    code, out, err = apply(site.url, db, "--undo", run_id, "--force", capsys=capsys)
    assert code == 0, err
    assert site.raw_content(source) == raw


def test_one_failing_post_does_not_stop_the_others(env: WordPressSite, tmp_path: Path, capsys):
    site = env
    target, target_url = post(site, "Levain", para("Levain."))
    first, first_url = post(site, "First levain", para("Make a levain first."))
    refused, refused_url = post(site, "Refused levain", para("Make a levain here too."))
    last, last_url = post(site, "Last levain", para("A levain last."))
    db = tmp_path / "decisions.sqlite"
    store = DecisionStore(db)
    for url in (first_url, refused_url, last_url):
        store.decide(url, target_url, "approved", anchor="levain")
    refuse = (f"add_filter('rest_pre_insert_post', function ($post, $request) {{\n"
              f"    if ((int) $request['id'] === {refused}) return new WP_Error('refused_by_test', "
              "'This post is locked by the test', ['status' => 500]);\n"
              "    return $post;\n}, 10, 2);\n")
    with site.mu_plugin(f"refuse-{refused}", refuse):
        code, out, err = apply(site.url, db, "--write", capsys=capsys)
    assert code == 1
    assert "HTTP 500 refused_by_test: This post is locked by the test" in out
    assert "2 links written in 2 posts, 0 skipped, 1 failed" in out
    assert f'<a href="{target_url}">levain</a>' in site.raw_content(first)
    assert f'<a href="{target_url}">levain</a>' in site.raw_content(last)
    assert site.raw_content(refused) == para("Make a levain here too.")


def test_rows_outside_wordpress_and_no_approved_rows(env: WordPressSite, tmp_path: Path, capsys):
    site = env
    target, target_url = post(site, "Hydration", para("Hydration."))
    db = tmp_path / "decisions.sqlite"
    store = DecisionStore(db)
    code, out, err = apply(site.url, db, capsys=capsys)
    assert code == 0 and "no approved rows" in out
    store.decide(site.url + "not-a-post/", target_url, "approved", anchor="hydration")
    code, out, err = apply(site.url, db, "--write", capsys=capsys)
    assert code == 0, err
    assert "source page is not a post or page of this WordPress" in out and "nothing written" in out
    # Pages are sources and targets too (wp/v2/pages).
    page = site.create_post("Flour types", para("Which flour types to buy."), post_type="page",
                            slug=f"apply-flour-{secrets.token_hex(3)}")
    page_url = site.permalink(page)
    store.decide(page_url, target_url, "approved", anchor="flour types")
    store.decide(target_url, page_url, "approved", anchor="hydration")
    code, out, err = apply(site.url, db, "--write", capsys=capsys)
    assert code == 0, err
    assert "2 links written in 2 posts" in out
    assert site.raw_content(page) == para(f'Which <a href="{target_url}">flour types</a> to buy.')
    assert site.raw_content(target) == para(f'<a href="{page_url}">Hydration</a>.')


def one_line_error(code: int, err: str) -> str:
    assert code == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    return lines[0]


def test_bad_credentials_and_missing_environment(wordpress: WordPressSite, tmp_path: Path, capsys,
                                                 monkeypatch: pytest.MonkeyPatch):
    site = wordpress
    target, target_url = post(site, "Autolyse", para("Autolyse."))
    raw = para("Try an autolyse.")
    source, source_url = post(site, "Rest", raw)
    db = tmp_path / "decisions.sqlite"
    DecisionStore(db).decide(source_url, target_url, "approved", anchor="autolyse")
    monkeypatch.delenv("LINKSPIDER_WP_USER", raising=False)
    monkeypatch.delenv("LINKSPIDER_WP_APP_PASSWORD", raising=False)
    line = one_line_error(*apply(site.url, db, "--write", capsys=capsys)[::2])
    assert "LINKSPIDER_WP_USER and LINKSPIDER_WP_APP_PASSWORD" in line
    monkeypatch.setenv("LINKSPIDER_WP_USER", site.user)
    line = one_line_error(*apply(site.url, db, "--write", capsys=capsys)[::2])
    assert "set LINKSPIDER_WP_APP_PASSWORD" in line
    monkeypatch.setenv("LINKSPIDER_WP_APP_PASSWORD", "wrong " + site.app_password[:10])
    line = one_line_error(*apply(site.url, db, "--write", capsys=capsys)[::2])
    assert "refused the credentials" in line and "401" in line
    assert site.raw_content(source) == raw
    assert "no apply runs yet" in subprocess_runs(db)


def subprocess_runs(db: Path) -> str:
    """``apply --runs`` as a user runs it (a new process)."""
    done = subprocess.run([sys.executable, "-m", "postprocess", "apply", "--db", str(db), "--runs"], cwd=REPO,
                          capture_output=True, text=True, timeout=60, check=True)
    return done.stdout


def test_unreachable_site_and_not_a_wordpress(env: WordPressSite, tmp_path: Path, capsys):
    db = tmp_path / "decisions.sqlite"
    DecisionStore(db).decide("http://127.0.0.1/a/", "http://127.0.0.1/b/", "approved", anchor="a")
    line = one_line_error(*apply(f"http://127.0.0.1:{free_port()}/", db, capsys=capsys)[::2])
    assert "cannot be reached" in line and "refused" in line.lower()
    line = one_line_error(*apply("not a url", db, capsys=capsys)[::2])
    assert "is not an http(s) URL" in line
    plain = subprocess.Popen([sys.executable, "-u", "-m", "http.server", "0", "--bind", "127.0.0.1",
                              "--directory", str(tmp_path)], stdout=subprocess.PIPE,
                             stderr=subprocess.DEVNULL, text=True)
    try:
        assert plain.stdout is not None
        port = plain.stdout.readline().split("port ")[1].split()[0]
        line = one_line_error(*apply(f"http://127.0.0.1:{port}/", db, capsys=capsys)[::2])
        assert "is not a WordPress site with its REST API on" in line
    finally:
        plain.terminate()
        plain.wait(timeout=10)


def test_rest_api_switched_off(env: WordPressSite, tmp_path: Path, capsys):
    site = env
    db = tmp_path / "decisions.sqlite"
    DecisionStore(db).decide(site.url + "a/", site.url + "b/", "approved", anchor="a")
    off = ("add_filter('rest_authentication_errors', function () {\n"
           "    return new WP_Error('rest_disabled', 'The REST API is switched off', ['status' => 401]);\n"
           "});\n"
           "remove_action('template_redirect', 'rest_output_link_header', 11);\n")
    with site.mu_plugin("rest-off", off):
        line = one_line_error(*apply(site.url, db, capsys=capsys)[::2])
    assert "the WordPress REST API is switched off (rest_disabled" in line


def write_crawl(folder: Path, fetched: dict[str, datetime]) -> Path:
    """A crawl directory whose pages part says when each URL was fetched."""
    (folder / "pages").mkdir(parents=True)
    table = pa.table({"url": list(fetched), "fetched_at": pa.array(list(fetched.values()),
                                                                   pa.timestamp("us", tz="UTC"))})
    pq.write_table(table, folder / "pages" / "part-00000.parquet")
    return folder


def test_a_post_edited_since_the_crawl_is_skipped(env: WordPressSite, tmp_path: Path, capsys):
    site = env
    target, target_url = post(site, "Banneton", para("Banneton."))
    edited, edited_url = post(site, "Edited banneton", para("A banneton helps."))
    kept, kept_url = post(site, "Kept banneton", para("A banneton again."))
    for post_id in (edited, kept):  # both last changed in 2020 ...
        when = "'2020-01-01 00:00:00'"
        site.php(f"global $wpdb; $wpdb->update($wpdb->posts, ['post_modified_gmt' => {when}, "
                 f"'post_modified' => {when}], ['ID' => {post_id}]); clean_post_cache({post_id});")
    # ... and crawled in 2019 (before that change) and in 2021 (after it).
    crawl = write_crawl(tmp_path / "crawl", {edited_url: datetime(2019, 6, 1, tzinfo=UTC),
                                             kept_url: datetime(2021, 6, 1, tzinfo=UTC)})
    db = tmp_path / "decisions.sqlite"
    store = DecisionStore(db)
    store.decide(edited_url, target_url, "approved", anchor="banneton")
    store.decide(kept_url, target_url, "approved", anchor="banneton")
    # Without --crawl, the crawl the run in --out read (its summary.json) is the one checked.
    run_out = tmp_path / "out"
    run_out.mkdir()
    (run_out / "summary.json").write_text(json.dumps({"crawl": str(crawl)}))
    code, out, err = apply(site.url, db, "--out", str(run_out), capsys=capsys)
    assert code == 0, err
    assert "post edited since the crawl" in out and "dry run: 1 links in 1 posts" in out
    code, out, err = apply(site.url, db, "--write", "--crawl", str(crawl), capsys=capsys)
    assert code == 0, err
    assert ("post edited since the crawl (modified 2020-01-01T00:00:00 UTC, fetched 2019-06-01T00:00:00 UTC)"
            in out)
    assert site.raw_content(edited) == para("A banneton helps.")
    assert site.raw_content(kept) == para(f'A <a href="{target_url}">banneton</a> again.')
    # Our own write changed the post after the crawl: that is not an editor's edit.
    other, other_url = post(site, "Couche", para("Couche."))
    store.decide(kept_url, other_url, "approved", anchor="again")
    code, out, err = apply(site.url, db, "--write", "--crawl", str(crawl), capsys=capsys)
    assert code == 0, err
    assert site.raw_content(kept) == para(f'A <a href="{target_url}">banneton</a> '
                                          f'<a href="{other_url}">again</a>.')
    line = one_line_error(*apply(site.url, db, "--crawl", str(tmp_path / "none"), capsys=capsys)[::2])
    assert "has no pages/part-*.parquet" in line


def test_an_update_whose_answer_is_lost_is_still_logged(env: WordPressSite, tmp_path: Path, capsys):
    site = env
    target, target_url = post(site, "Lame", para("Lame."))
    raw = para("Score it with a lame.")
    source, source_url = post(site, "Scoring", raw)
    db = tmp_path / "decisions.sqlite"
    DecisionStore(db).decide(source_url, target_url, "approved", anchor="lame")
    lose = (f"add_action('rest_after_insert_post', function ($post) {{\n"
            f"    if ($post->ID === {source}) {{ status_header(502); exit; }}\n}});\n")
    with site.mu_plugin(f"lose-{source}", lose):
        code, out, err = apply(site.url, db, "--write", capsys=capsys)
    assert code == 0, out + err
    assert "1 links written in 1 posts, 0 skipped, 0 failed" in out
    assert site.raw_content(source) == para(f'Score it with a <a href="{target_url}">lame</a>.')
    run_id = out.split("apply run ", 1)[1].split(":", 1)[0]
    code, out, err = apply(site.url, db, "--undo", run_id, capsys=capsys)
    assert code == 0, err
    assert site.raw_content(source) == raw
