"""A real WordPress (Debian's package) on 127.0.0.1 for tests and benchmarks.

:func:`wordpress_site` starts a private MariaDB (its own datadir, socket and port, no
service) and PHP's built-in server in a folder, installs WordPress with php-cli
(``wp_install``), optionally fills it with "The Kitchen Ledger" (``benchmarks/blogsite``: its
posts and pages converted to block markup, with their categories, tags, authors and dates),
and stops both servers, by pid, when the ``with`` block ends — also on error.

Debian's ``wp-config.php`` picks its configuration by the ``WORDPRESS_CONFIG`` server variable:
each site gets ``/etc/wordpress/config-linkspider-<id>.php``, a one-line stub that loads the
site's own config in its folder, removed when the site stops.

``python -m tests.wordpress_site --port 8200 --folder /tmp/wp`` keeps one running by hand.
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import pwd
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterator, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from types import ModuleType
from typing import Any

REPO = Path(__file__).resolve().parents[1]
try:  # pytest puts tests/ on the path; ``python -m tests.wordpress_site`` runs from the root
    from crawlkit import module_from_file
    from local_servers import HOST, free_port, wait_for
except ImportError:  # pragma: no cover - the command-line use
    from tests.crawlkit import module_from_file
    from tests.local_servers import HOST, free_port, wait_for
WP_ROOT = Path("/usr/share/wordpress")
THEMES = WP_ROOT / "wp-content" / "themes"
CONFIG_DIR = Path("/etc/wordpress")
BLOGSITE_BUILD = REPO / "benchmarks" / "blogsite" / "build.py"
PERMALINKS = "/%year%/%monthnum%/%postname%/"
ADMIN = "admin"
POST_SETS = ("kitchen-ledger", "none")
_PHP_FLAGS = ["-d", "display_errors=stderr", "-d", "log_errors=0", "-d", "memory_limit=512M"]
_MARKER = ".wordpress-site"


def _mariadbd() -> str | None:
    return shutil.which("mariadbd") or next(
        (str(p) for p in (Path("/usr/sbin/mariadbd"),) if p.is_file()), None
    )


@cache
def missing() -> str | None:
    """Why WordPress cannot run here (a missing package or command), or None when it can."""
    for command in ("php", "mariadb", "mariadb-install-db"):
        if shutil.which(command) is None:
            return f"{command} is not installed (scripts/setup.sh installs it, as root)"
    if _mariadbd() is None:
        return "mariadbd is not installed (package mariadb-server; scripts/setup.sh installs it, as root)"
    if not (WP_ROOT / "wp-load.php").is_file():
        return f"WordPress is not installed at {WP_ROOT} (package wordpress; scripts/setup.sh, as root)"
    if not (THEMES / "twentytwentythree").is_dir():
        return "theme Twenty Twenty-Three is missing (package wordpress-theme-twentytwentythree)"
    check = "foreach (['mysqli','xml','mbstring','curl'] as $e) if (!extension_loaded($e)) echo \"php-$e \";"
    done = subprocess.run(["php", "-r", check], capture_output=True, text=True, check=False)
    if done.returncode != 0 or done.stdout.strip():
        return f"PHP extensions missing: {done.stdout.strip() or done.stderr.strip()[:200]}"
    if not os.access(CONFIG_DIR, os.W_OK):
        return f"{CONFIG_DIR} is not writable (each test site puts its config stub there: run as root)"
    return None


def _stop(process: subprocess.Popen[bytes], timeout: float = 15.0) -> None:
    """SIGTERM the process group of ``process`` (it was started in its own session), then reap it."""
    if process.poll() is not None:
        return
    try:
        os.killpg(process.pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    try:
        process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()


def _php_string(value: str) -> str:
    """A PHP single-quoted string literal."""
    return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"


@dataclass
class WordPressSite:
    """A running WordPress: its URL, REST API root and an administrator's application password."""

    url: str  # http://127.0.0.1:PORT/
    api: str  # url + "wp-json/"
    user: str
    app_password: str
    folder: Path

    def php(self, code: str) -> str:
        """Run PHP ``code`` (statements, no ``<?php``) with WordPress loaded; its stdout."""
        return _run_php(self.folder, code)

    def create_post(self, title: str, content: str, *, slug: str | None = None, status: str = "publish",
                    post_type: str = "post", tags: Sequence[str] = (), categories: Sequence[str] = ()) -> int:
        """Insert a post (or page) as the administrator; its id. Categories by slug or name (created)."""
        data = {"title": title, "content": content, "slug": slug or "", "status": status, "type": post_type,
                "tags": list(tags), "categories": list(categories)}
        code = f"$d = json_decode({_php_string(json.dumps(data))}, true);\n" + """
wp_set_current_user(1);
$cats = [];
foreach ($d['categories'] as $c) {
    $t = get_term_by('slug', $c, 'category') ?: get_term_by('name', $c, 'category');
    $cats[] = $t ? $t->term_id : wp_insert_term($c, 'category')['term_id'];
}
$args = ['post_title' => $d['title'], 'post_content' => $d['content'], 'post_status' => $d['status'],
         'post_type' => $d['type'], 'tags_input' => $d['tags']];
if ($d['slug'] !== '') $args['post_name'] = $d['slug'];
if ($cats) $args['post_category'] = $cats;
$id = wp_insert_post(wp_slash($args), true);
if (is_wp_error($id)) { fwrite(STDERR, $id->get_error_message()); exit(1); }
echo $id;
"""
        return int(self.php(code).strip())

    def raw_content(self, post_id: int) -> str:
        """The stored ``post_content`` of a post (block markup), read with PHP."""
        return self.php(f"$p = get_post({int(post_id)}); if (!$p) exit(1); echo $p->post_content;")

    def permalink(self, post_id: int) -> str:
        """The post's permalink, as WordPress makes it."""
        return self.php(f"echo get_permalink({int(post_id)});").strip()

    @contextmanager
    def mu_plugin(self, name: str, php: str) -> Iterator[None]:
        """A must-use plugin (``php`` without the opening tag) in the site for the length of the block."""
        folder = self.folder / "wp-content" / "mu-plugins"
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"{name}.php"
        path.write_text("<?php\n" + php)
        try:
            yield
        finally:
            path.unlink()

    def authorization(self) -> str:
        """The ``Authorization`` header value for the REST API (Basic, application password)."""
        return "Basic " + base64.b64encode(f"{self.user}:{self.app_password}".encode()).decode()


def _run_php(folder: Path, code: str, timeout: float = 300) -> str:
    code = code.strip().removeprefix("<?php")
    script = f"<?php\nrequire {_php_string(str(folder / 'prelude.php'))};\n{code}\n"
    done = subprocess.run(["php", *_PHP_FLAGS], input=script, capture_output=True, text=True,
                          timeout=timeout, check=False)
    if done.returncode != 0:
        problem = done.stderr.strip()[-2000:] + done.stdout[-500:]
        raise RuntimeError(f"php failed ({done.returncode}): {problem}")
    return done.stdout


# --------------------------------------------------------------------------- the servers


def _write_mariadb_config(folder: Path, socket_path: Path, port: int) -> Path:
    data = folder / "mysql"
    data.mkdir(parents=True, exist_ok=True)
    user = pwd.getpwuid(os.getuid()).pw_name
    cnf = folder / "my.cnf"
    cnf.write_text(
        "[mysqld]\n"
        f"datadir={data / 'data'}\n"
        f"socket={socket_path}\n"
        f"pid-file={data / 'mariadbd.pid'}\n"
        f"log-error={data / 'error.log'}\n"
        f"port={port}\n"
        f"bind-address={HOST}\n"
        f"user={user}\n"
        "skip-name-resolve\n"
        "innodb_buffer_pool_size=64M\n"
        "innodb_log_file_size=16M\n"
        "innodb_flush_log_at_trx_commit=2\n"
        "character-set-server=utf8mb4\n"
        "[client]\n"
        f"socket={socket_path}\n"
        f"port={port}\n"
        "user=root\n"
    )
    return cnf


@contextmanager
def _mariadb(folder: Path, port: int, password: str) -> Iterator[None]:
    """A private MariaDB on ``port`` with database and user ``wordpress``."""
    socket_dir = Path(tempfile.mkdtemp(prefix="wpdb-", dir="/tmp"))  # short: a socket path has a limit
    cnf = _write_mariadb_config(folder, socket_dir / "mysqld.sock", port)
    log = folder / "mysql" / "error.log"
    try:
        done = subprocess.run(["mariadb-install-db", f"--defaults-file={cnf}",
                               "--auth-root-authentication-method=socket", "--skip-test-db"],
                              capture_output=True, text=True, check=False, timeout=120)
        if done.returncode != 0:
            raise RuntimeError(f"mariadb-install-db failed: {(done.stderr or done.stdout)[-2000:]}")
        process = subprocess.Popen([_mariadbd(), f"--defaults-file={cnf}"], stdout=subprocess.DEVNULL,
                                   stderr=subprocess.DEVNULL, start_new_session=True)
        try:
            def answers() -> bool:
                if process.poll() is not None:
                    raise RuntimeError(f"mariadbd exited: {log.read_text(errors='replace')[-2000:]}")
                done = subprocess.run(["mariadb", f"--defaults-file={cnf}", "-e", "SELECT 1"],
                                      capture_output=True, check=False)
                return done.returncode == 0

            wait_for(answers, "mariadbd", 60.0, log)
            sql = (f"CREATE DATABASE wordpress CHARACTER SET utf8mb4; "
                   f"CREATE USER 'wordpress'@'{HOST}' IDENTIFIED BY '{password}'; "
                   f"GRANT ALL ON wordpress.* TO 'wordpress'@'{HOST}';")
            subprocess.run(["mariadb", f"--defaults-file={cnf}", "-e", sql], capture_output=True, check=True)
            yield
        finally:
            _stop(process, timeout=30)
    finally:
        shutil.rmtree(socket_dir, ignore_errors=True)


ROUTER = """<?php
// What .htaccess does for WordPress: real files are served, everything else goes to index.php.
$_SERVER['WORDPRESS_CONFIG'] = %(config)s;
$path = parse_url($_SERVER['REQUEST_URI'], PHP_URL_PATH) ?: '/';
if (strpos($path, '..') !== false) { http_response_code(400); return true; }
if (strncmp($path, '/wp-content/uploads/', 20) === 0) {
    $file = %(content)s . substr($path, 11);
    if (!is_file($file)) { http_response_code(404); return true; }
    header('Content-Type: ' . mime_content_type($file));
    readfile($file);
    return true;
}
$file = %(root)s . $path;
if (is_dir($file) && is_file(rtrim($file, '/') . '/index.php')) $file = rtrim($file, '/') . '/index.php';
if ($path !== '/' && is_file($file)) {
    if (substr($file, -4) !== '.php') return false;
    $_SERVER['SCRIPT_NAME'] = $_SERVER['PHP_SELF'] = substr($file, strlen(%(root)s));
    $_SERVER['SCRIPT_FILENAME'] = $file;
    chdir(dirname($file));
    require $file;
    return true;
}
$_SERVER['SCRIPT_NAME'] = $_SERVER['PHP_SELF'] = '/index.php';
$_SERVER['SCRIPT_FILENAME'] = %(root)s . '/index.php';
chdir(%(root)s);
require %(root)s . '/index.php';
return true;
"""

PRELUDE = """<?php
// php-cli with WordPress loaded, as if serving a request to the site.
$_SERVER['HTTP_HOST'] = %(host)s;
$_SERVER['SERVER_NAME'] = '127.0.0.1';
$_SERVER['SERVER_PORT'] = %(port)d;
$_SERVER['REQUEST_URI'] = '/';
$_SERVER['REQUEST_METHOD'] = 'GET';
$_SERVER['WORDPRESS_CONFIG'] = %(config)s;
if (getenv('WP_INSTALLING')) define('WP_INSTALLING', true);
require %(root)s . '/wp-load.php';
add_filter('pre_wp_mail', '__return_false');
"""

SITE_CONFIG = """<?php
// The site's own configuration (loaded by Debian's wp-config.php through the stub in /etc/wordpress).
define('DB_NAME', 'wordpress');
define('DB_USER', 'wordpress');
define('DB_PASSWORD', %(password)s);
define('DB_HOST', %(db_host)s);
define('DB_CHARSET', 'utf8mb4');
define('WP_HOME', %(home)s);
define('WP_SITEURL', %(home)s);
define('WP_CONTENT_DIR', %(content)s);
define('WP_CONTENT_URL', %(content_url)s);
define('WP_ENVIRONMENT_TYPE', 'local');  // application passwords over plain http
define('WP_HTTP_BLOCK_EXTERNAL', true);
define('AUTOMATIC_UPDATER_DISABLED', true);
define('DISABLE_WP_CRON', true);
define('WP_DEBUG', false);
%(salts)s
"""


def _prepare_folder(folder: Path) -> None:
    """An empty folder, or one an earlier site left (emptied); anything else is refused."""
    folder.mkdir(parents=True, exist_ok=True)
    entries = list(folder.iterdir())
    if entries and not (folder / _MARKER).is_file():
        raise RuntimeError(f"{folder} is not empty and was not made by wordpress_site: refusing to use it")
    for entry in entries:
        if entry.is_dir() and not entry.is_symlink():
            shutil.rmtree(entry)
        else:
            entry.unlink()
    (folder / _MARKER).write_text("made by tests/wordpress_site.py; emptied on the next start\n")


def _remove_stale_stubs() -> None:
    """Config stubs of sites whose folder is gone (a killed run) are removed."""
    for stub in CONFIG_DIR.glob("config-linkspider-*.php"):
        target = stub.read_text(errors="replace").split("require ", 1)[-1].strip(" ';\n")
        if not Path(target).is_file():
            stub.unlink(missing_ok=True)


def _write_site_files(folder: Path, url: str, db_port: int, password: str, config: str) -> None:
    content = folder / "wp-content"
    for name in ("plugins", "uploads"):
        (content / name).mkdir(parents=True, exist_ok=True)
    (content / "themes").symlink_to(THEMES)
    salts = "\n".join(
        f"define('{name}', '{secrets.token_hex(32)}');"
        for name in ("AUTH_KEY", "SECURE_AUTH_KEY", "LOGGED_IN_KEY", "NONCE_KEY", "AUTH_SALT",
                     "SECURE_AUTH_SALT", "LOGGED_IN_SALT", "NONCE_SALT")
    )
    values = {"password": _php_string(password), "db_host": _php_string(f"{HOST}:{db_port}"),
              "home": _php_string(url.rstrip("/")), "content": _php_string(str(content)),
              "content_url": _php_string(url + "wp-content"), "salts": salts}
    (folder / "wp-config-site.php").write_text(SITE_CONFIG % values)
    port = int(url.rsplit(":", 1)[1].strip("/"))
    common = {"config": _php_string(config), "root": _php_string(str(WP_ROOT)),
              "content": _php_string(str(content))}
    (folder / "router.php").write_text(ROUTER % common)
    prelude = PRELUDE % {**common, "host": _php_string(f"{HOST}:{port}"), "port": port}
    (folder / "prelude.php").write_text(prelude)


@contextmanager
def _config_stub(folder: Path, config: str) -> Iterator[None]:
    stub = CONFIG_DIR / f"config-{config}.php"
    stub.write_text(f"<?php require {_php_string(str(folder / 'wp-config-site.php'))};\n")
    try:
        yield
    finally:
        stub.unlink(missing_ok=True)


@contextmanager
def _php_server(folder: Path, port: int) -> Iterator[None]:
    log = folder / "php-server.log"
    env = {**os.environ, "PHP_CLI_SERVER_WORKERS": "4"}
    with open(log, "wb") as out:
        process = subprocess.Popen(["php", *_PHP_FLAGS, "-S", f"{HOST}:{port}", "-t", str(WP_ROOT),
                                    str(folder / "router.php")], stdout=out, stderr=subprocess.STDOUT,
                                   env=env, cwd=folder, start_new_session=True)
    try:
        def answers() -> bool:
            if process.poll() is not None:
                raise RuntimeError(f"php -S exited: {log.read_text(errors='replace')[-2000:]}")
            try:
                with socket.create_connection((HOST, port), timeout=0.5):
                    return True
            except OSError:
                return False

        wait_for(answers, "php -S", 30.0, log)
        yield
    finally:
        _stop(process)


# --------------------------------------------------------------------------- installing

INSTALL = """
require_once ABSPATH . 'wp-admin/includes/upgrade.php';
$d = json_decode(file_get_contents(%(data)s), true);
wp_install($d['title'], %(admin)s, 'admin@example.invalid', true, '', $d['password']);  // public: indexable
wp_set_current_user(1);
update_option('blogdescription', $d['tagline']);
update_option('timezone_string', 'UTC');
update_option('posts_per_page', 10);
update_option('permalink_structure', %(permalinks)s);
foreach ([1, 2, 3] as $id) wp_delete_post($id, true);  // Hello world!, Sample Page, Privacy Policy
$pass = WP_Application_Passwords::create_new_application_password(1, ['name' => 'linkspider tests']);
echo json_encode(['app_password' => $pass[0]]);
"""

FILL = """
$d = json_decode(file_get_contents(%(data)s), true);
wp_set_current_user(1);
$users = [];
foreach ($d['authors'] as $a) {
    $users[$a['slug']] = wp_insert_user(['user_login' => $a['slug'], 'user_nicename' => $a['slug'],
        'display_name' => $a['name'], 'description' => $a['bio'], 'role' => 'author',
        'user_email' => $a['slug'] . '@example.invalid', 'user_pass' => wp_generate_password(24)]);
}
$cats = [];
foreach ($d['categories'] as $c) {
    $cats[$c['slug']] = wp_insert_term($c['name'], 'category',
        ['slug' => $c['slug'], 'description' => $c['intro']])['term_id'];
}
$ids = [];
foreach ($d['posts'] as $p) {
    $args = ['post_title' => $p['title'], 'post_name' => $p['slug'], 'post_content' => $p['content'],
        'post_excerpt' => $p['excerpt'], 'post_status' => 'publish', 'post_type' => $p['type'],
        'post_date' => $p['date'], 'post_date_gmt' => $p['date'], 'post_author' => $users[$p['author']] ?? 1];
    if ($p['type'] === 'post') {
        $args['post_category'] = [$cats[$p['category']]];
        $args['tags_input'] = $p['tags'];
    }
    $id = wp_insert_post(wp_slash($args), true);
    if (is_wp_error($id)) { fwrite(STDERR, $p['slug'] . ': ' . $id->get_error_message()); exit(1); }
    $ids[$p['slug']] = $id;
}
// Never edited since: modified = published (a later edit moves it, as in WordPress).
global $wpdb;
$wpdb->query("UPDATE $wpdb->posts SET post_modified = post_date, post_modified_gmt = post_date_gmt
              WHERE post_type IN ('post', 'page')");
wp_cache_flush();
echo json_encode($ids);
"""


def _install(folder: Path, title: str, password: str) -> str:
    """wp_install with php-cli; the administrator's application password."""
    data = folder / "install.json"
    data.write_text(json.dumps({"title": title, "tagline": _blogsite().TAGLINE, "password": password}))
    os.environ["WP_INSTALLING"] = "1"
    try:
        out = _run_php(folder, INSTALL % {"data": _php_string(str(data)), "admin": _php_string(ADMIN),
                                          "permalinks": _php_string(PERMALINKS)})
    finally:
        del os.environ["WP_INSTALLING"]
    data.unlink()
    # Rewrite rules are made in a normal request, after the install, from the permalink option.
    _run_php(folder, "flush_rewrite_rules(false);")
    return json.loads(out.strip().splitlines()[-1])["app_password"]


@cache
def _blogsite() -> ModuleType:
    """benchmarks/blogsite/build.py, imported: its Markdown reader and the site's constants."""
    return module_from_file("kitchen_ledger_build", BLOGSITE_BUILD)


def wrap(name: str, html: str, attrs: str = "") -> str:
    """One block: ``<!-- wp:NAME {attrs} -->`` html ``<!-- /wp:NAME -->``."""
    return f"<!-- wp:{name}{' ' + attrs if attrs else ''} -->\n{html}\n<!-- /wp:{name} -->"


def block_markup(markdown: str, renderer: Any) -> str:
    """A Kitchen Ledger body (build.py's Markdown subset, read by its Renderer) as Gutenberg blocks."""
    build = _blogsite()
    blocks = []
    for kind, lines in build.split_blocks(markdown):
        if kind in ("ul", "ol"):
            pattern = build.UL_RE if kind == "ul" else build.OL_RE
            items = "\n".join(
                wrap("list-item", f"<li>{renderer.inline(pattern.sub('', line.strip(), count=1))}</li>")
                for line in lines
            )
            ordered = '{"ordered":true}' if kind == "ol" else ""
            blocks.append(wrap("list", f"<{kind}>{items}</{kind}>", ordered))
        elif kind == "quote":
            text = " ".join(line.strip().removeprefix(">").strip() for line in lines)
            inner = wrap("paragraph", f"<p>{renderer.inline(text)}</p>")
            blocks.append(wrap("quote", f'<blockquote class="wp-block-quote">{inner}</blockquote>'))
        elif kind == "heading":
            level = max(2, len(build.HEADING_RE.match(lines[0].strip()).group(1)))
            attrs = "" if level == 2 else f'{{"level":{level}}}'
            blocks.append(wrap("heading", renderer.block(kind, lines), attrs))
        else:
            name = {"p": "paragraph", "code": "code", "table": "table", "image": "image"}[kind]
            attrs = '{"sizeSlug":"large"}' if kind == "image" else ""
            blocks.append(wrap(name, renderer.block(kind, lines), attrs))
    return "\n\n".join(blocks)


def _hub_blocks(url: str, posts: list[Any], categories: dict[str, Any]) -> str:
    """The Start here page's list of every post by category, as blocks (build.py's hub layout)."""
    build = _blogsite()
    out = []
    for category in categories.values():
        mine = sorted((p for p in posts if p.category == category), key=lambda p: (p.published, p.slug))
        if not mine:
            continue
        items = "\n".join(wrap("list-item", f'<li><a href="{url}{p.url.lstrip("/")}">'
                                            f"{build.esc(build.texturize(p.title))}</a></li>") for p in mine)
        name = build.esc(category.name)
        intro = (f'<p>{build.esc(category.intro)} <a href="{url}category/{category.slug}/">'
                 f"All {name.lower()} posts</a></p>")
        out.append("\n\n".join([wrap("heading", f'<h2 class="wp-block-heading">{name}</h2>'),
                                 wrap("paragraph", intro), wrap("list", f"<ul>{items}</ul>")]))
    return "\n\n".join(out)


def kitchen_ledger(url: str, uploads: Path) -> dict:
    """The Kitchen Ledger's authors, categories, posts and pages for WordPress at ``url`` (placeholder
    images written under ``uploads``): bodies as block markup, internal links to the permalinks."""
    build = _blogsite()
    posts = build.load_posts(build.POSTS_DIR)
    pages = build.load_pages(build.PAGES_DIR)
    planned = build.planned_slugs(build.PLAN_FILE)
    permalinks = {p.slug: url + p.url.lstrip("/") for p in posts}
    image = build.placeholder_jpeg(*build.IMAGE_SIZE)
    rows = []
    for post in posts:
        folder = f"{post.published:%Y}/{post.published:%m}/"
        renderer = build.Renderer(post.source, permalinks, planned, f"{url}wp-content/uploads/{folder}")
        content = block_markup(post.body, renderer)
        for src in renderer.images:
            target = uploads / src.removeprefix(f"{url}wp-content/uploads/")
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(image)
        rows.append({"type": "post", "title": post.title, "slug": post.slug, "content": content,
                     "excerpt": post.excerpt, "date": f"{post.published:%Y-%m-%d} 08:00:00",
                     "author": post.author.slug, "category": post.category.slug, "tags": post.tags})
    first = min(p.published for p in posts)
    for page in pages:
        renderer = build.Renderer(page.source, permalinks, planned, f"{url}wp-content/uploads/")
        content = block_markup(page.body, renderer)
        if page.layout == "hub":
            content += "\n\n" + _hub_blocks(url, posts, build.CATEGORIES)
        rows.append({"type": "page", "title": page.title, "slug": page.slug, "content": content,
                     "excerpt": page.excerpt, "date": f"{first:%Y-%m-%d} 08:00:00", "author": "maya",
                     "category": None, "tags": []})
    return {
        "authors": [{"slug": a.slug, "name": a.name, "bio": a.bio} for a in build.AUTHORS.values()],
        "categories": [{"slug": c.slug, "name": c.name, "intro": c.intro} for c in build.CATEGORIES.values()],
        "posts": rows,
    }


def _fill(folder: Path, url: str) -> None:
    data = folder / "kitchen-ledger.json"
    data.write_text(json.dumps(kitchen_ledger(url, folder / "wp-content" / "uploads")))
    _run_php(folder, FILL % {"data": _php_string(str(data))})


def _wait_for_http(url: str, timeout: float = 30.0) -> None:
    def answers() -> bool:
        try:
            with urllib.request.urlopen(url, timeout=5) as response:
                return response.status == 200
        except (urllib.error.URLError, OSError):
            return False

    wait_for(answers, f"WordPress at {url}", timeout)


@contextmanager
def wordpress_site(folder: Path, *, posts: str = "kitchen-ledger", port: int | None = None
                   ) -> Iterator[WordPressSite]:
    """A WordPress installed in ``folder`` and served on 127.0.0.1 (``port`` or a free one).

    ``posts``: ``kitchen-ledger`` (benchmarks/blogsite's posts and pages) or ``none`` (an empty site).
    """
    if posts not in POST_SETS:
        raise ValueError(f"posts must be one of {', '.join(POST_SETS)}, got {posts!r}")
    problem = missing()
    if problem:
        raise RuntimeError(f"WordPress cannot run here: {problem}")
    folder = Path(folder).resolve()
    _prepare_folder(folder)
    _remove_stale_stubs()
    port = port or free_port()
    url = f"http://{HOST}:{port}/"
    password = secrets.token_hex(12)
    config = f"linkspider-{secrets.token_hex(6)}"
    db_port = free_port()
    _write_site_files(folder, url, db_port, password, config)
    with ExitStack() as stack:
        stack.enter_context(_config_stub(folder, config))
        stack.enter_context(_mariadb(folder, db_port, password))
        app_password = _install(folder, "The Kitchen Ledger", secrets.token_urlsafe(16))
        if posts == "kitchen-ledger":
            _fill(folder, url)
        stack.enter_context(_php_server(folder, port))
        _wait_for_http(url)
        yield WordPressSite(url=url, api=url + "wp-json/", user=ADMIN, app_password=app_password,
                            folder=folder)


def main(argv: list[str] | None = None) -> int:
    """Keep one WordPress running until Ctrl-C (or SIGTERM)."""
    parser = argparse.ArgumentParser(description="Run a WordPress (Debian's package) on 127.0.0.1.")
    parser.add_argument("--port", type=int, default=None, help="port of the site (default: a free one)")
    parser.add_argument("--folder", type=Path, required=True, help="folder for the database and config")
    parser.add_argument("--posts", choices=POST_SETS, default="kitchen-ledger")
    args = parser.parse_args(argv)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    started = time.monotonic()
    try:
        with wordpress_site(args.folder, posts=args.posts, port=args.port) as site:
            print(f"WordPress ready in {time.monotonic() - started:.1f} s\n  site     {site.url}\n"
                  f"  REST API {site.api}\n  user     {site.user}\n  app password {site.app_password}\n"
                  "Ctrl-C stops it.", flush=True)
            while True:
                time.sleep(3600)
    except KeyboardInterrupt:
        return 0
    except RuntimeError as exc:
        print(f"wordpress_site: error: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
