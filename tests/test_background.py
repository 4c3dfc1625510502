"""Background work: a function run in a forked child while the parent goes on."""

from __future__ import annotations

import gc
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from local_servers import gone

from postprocess.background import Background, available_workers, in_chunks, parent_waits

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")

PARENT = os.getpid()
ROOT = Path(__file__).resolve().parents[1]


def where(n: int) -> tuple[int, int]:
    return os.getpid(), n * n


def die_in_a_child(n: int) -> tuple[int, int]:
    if os.getpid() != PARENT:
        os._exit(9)  # killed before answering (as the kernel's out-of-memory killer would)
    return where(n)


def fail(n: int) -> None:
    raise ValueError(f"no square for {n}")


def write_on_a_full_disk(n: int) -> None:
    with open("/dev/full", "wb") as full:  # every write: ENOSPC
        full.write(b"x" * n)
        full.flush()


def test_the_function_runs_in_a_child_and_its_value_comes_back():
    job = Background(where, 12)
    pid, value = job.result()
    assert value == 144 and pid != os.getpid()
    assert job.forked


def test_without_fork_it_runs_here_when_asked():
    job = Background(where, 3, fork=False)
    assert job.result() == (os.getpid(), 9)


def test_without_fork_it_runs_here_now_once_and_lets_its_arguments_go():
    calls: list[int] = []

    def square(n: int) -> int:
        calls.append(n)
        return n * n

    job = Background(square, 4, fork=False)
    assert not job.done and calls == []
    assert job.now() is job and job.done and calls == [4] and job._args == ()
    assert job.now().result() == 16 and job.result() == 16 and calls == [4]  # computed once
    forked = Background(where, 2).now()  # with a child, ``now`` leaves the work to it
    assert not forked.done and forked.result()[1] == 4


def big(n: int) -> bytes:
    return b"x" * n


def test_a_child_leaves_as_soon_as_its_value_is_written():
    """A value larger than a pipe holds (64 KB) does not keep the child, and its memory, waiting
    for the parent to read: the child has exited (a zombie until reaped) before ``result``."""
    job = Background(big, 8 * 2**20)
    deadline = time.monotonic() + 20
    state = ""
    while time.monotonic() < deadline:
        with open(f"/proc/{job._pid}/stat") as stat:
            state = stat.read().rsplit(")", 1)[1].split()[0]
        if state == "Z":
            break
        time.sleep(0.05)
    assert state == "Z"
    assert job.result() == b"x" * 8 * 2**20


def test_wait_lets_the_child_leave_before_its_value_is_read():
    """``wait``: the child has left and been reaped (no longer counted as at work), its value still
    in its file until ``result`` reads it."""
    from postprocess import background

    job = Background(big, 8 * 2**20)
    pid = job._pid
    job.wait()
    assert pid not in background._children
    with pytest.raises(ChildProcessError):
        os.waitpid(pid, os.WNOHANG)  # reaped already
    job.wait()  # again: nothing left to wait for
    assert job.result() == b"x" * 8 * 2**20


def test_a_child_that_dies_is_replaced_by_the_parent():
    assert Background(die_in_a_child, 5).result() == (os.getpid(), 25)


def count_in_a_child(items: list[int] | None) -> tuple[int, object]:
    if os.getpid() != PARENT and items is not None and len(items) > 3:
        os._exit(9)  # a child that dies: the parent runs it again, with what it kept
    return os.getpid(), "made again" if items is None else len(items)


def test_arguments_forgotten_here_stay_the_childs_and_a_rerun_here_gets_none():
    items = [1, 2, 3]
    job = Background(count_in_a_child, items)
    job.forget(items)
    pid, value = job.result()
    assert value == 3 and pid != os.getpid()  # the child counted its own copy
    many = [1, 2, 3, 4]
    job = Background(count_in_a_child, many)
    job.forget(many)
    assert job.result() == (os.getpid(), "made again")  # it died: the parent had let the list go
    job = Background(where, 5, fork=False)
    job.forget(5)  # nothing was forked: the arguments are this process's only copy, kept
    assert job.result() == (os.getpid(), 25)


def test_an_error_in_the_child_is_raised_in_the_parent():
    with pytest.raises(RuntimeError, match="ValueError: no square for 4"):
        Background(fail, 4).result()


@pytest.mark.parametrize("fresh", [False, True])
def test_a_full_disk_in_the_child_is_an_os_error_in_the_parent(fresh):
    """A full disk in a second process is the same ``OSError`` in the first (errno and all), which
    the command line reports as one line, not a ``RuntimeError`` it cannot tell from a bug."""
    import errno

    with pytest.raises(OSError) as raised:
        Background(write_on_a_full_disk, 10, fresh=fresh).result()
    assert raised.value.errno == errno.ENOSPC and not isinstance(raised.value, RuntimeError)


def test_a_value_that_cannot_be_pickled_half_way_comes_back_as_the_error():
    """A value whose pickling fails after its first large part was written: the parent gets the
    error, not what the child wrote before it."""
    with pytest.raises(RuntimeError, match="(Pickling|Attribute)Error"):
        Background(lambda: (b"x" * 5_000_000, lambda: None)).result()


def test_a_large_value_is_held_once_in_each_process_as_it_travels():
    """The child pickles its value into the file and the parent unpickles it from there: neither
    holds the pickled bytes beside the value (each held it twice: at 1M pages the TF-IDF vectors
    alone are ~1.3 GB)."""
    script = """
import resource, tracemalloc
import numpy as np
from postprocess.background import Background
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
job = Background(lambda: np.arange(20_000_000, dtype=np.int64))  # 160 MB
tracemalloc.start()
value = job.result()
parent = tracemalloc.get_traced_memory()[1] / value.nbytes
child = (resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss - base) * 1024 / value.nbytes
print(round(parent, 2), round(child, 2), int(value[-1]))
"""
    out = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True,
                         timeout=120)
    parent, child, last = out.stdout.split()
    assert last == "19999999", out.stderr[-500:]
    # before: 2.0 and 1.82 (the value and its pickled bytes)
    assert float(parent) < 1.3 and float(child) < 1.3, out.stdout


def test_torch_runs_in_a_child_after_the_parent_used_its_threads():
    """A fork after torch's OpenMP pool ran hangs the child's first parallel operation unless the
    child runs torch on one thread (in a process of its own: a hang fails the test, not the suite)."""
    pytest.importorskip("torch")
    script = """
import torch
from postprocess.background import Background
torch.set_num_threads(2)
x = torch.randn(600, 600)
for _ in range(3):
    x @ x  # the parent's thread pool is up
print(abs(Background(lambda: float((x @ x).sum())).result() - float((x @ x).sum())) < 1e-2)
"""
    process = subprocess.Popen([sys.executable, "-c", script], cwd=ROOT, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        out, err = process.communicate(timeout=120)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)  # the parent and its hung child
        process.communicate()
        pytest.fail("the child hung on torch's threads")
    assert out.strip() == "True", err[-500:]


def own_memory() -> tuple[int, int, str]:
    """This process's pid, its own memory (``RssAnon``, MB) and its name."""
    status = Path("/proc/self/status").read_text()
    anon = next(int(line.split()[1]) for line in status.splitlines() if line.startswith("RssAnon:"))
    return os.getpid(), anon // 1024, _own_name()


def private_growth_of_a_full_collection() -> tuple[float, int]:
    """In a child: how much of the memory it shares with its parent a full collection made its own
    (``Private_Dirty``, MB), and the number of objects frozen out of the collector's reach."""
    def private() -> int:
        rollup = Path("/proc/self/smaps_rollup").read_text()
        return next(int(line.split()[1]) for line in rollup.splitlines() if line.startswith("Private_Dirty:"))

    before = private()
    gc.collect()
    return (private() - before) / 1024, gc.get_freeze_count()


def test_a_forked_childs_collections_leave_the_parents_objects_shared():
    """The objects a forked child shares with its parent are frozen out of the cyclic collector's
    reach (``gc.freeze``) until the child is collected: a full collection in the child writes to
    none of their pages (it wrote to every one, so the child copied ~all the parent's objects)."""
    held = [[i] for i in range(400_000)]  # ~40 MB of small objects the collector tracks
    growth, frozen = Background(private_growth_of_a_full_collection).result()
    assert frozen >= len(held) and growth < 5, (growth, frozen)
    assert gc.get_freeze_count() == 0  # the child collected: this process's objects are collectable again
    cycle: list[object] = []
    cycle.append(cycle)
    del cycle
    assert gc.collect() >= 1


def test_a_fresh_child_holds_none_of_the_parents_memory():
    """``fresh``: a new interpreter right after the fork, so the child holds none of the parent's
    heap (a forked child keeps copies of every page of it the parent writes while it works)."""
    np = pytest.importorskip("numpy")
    held = np.ones(200 * 2**20 // 8)  # 200 MB of this process's own memory
    forked_pid, forked, _ = Background(own_memory).result()
    fresh_pid, fresh, name = Background(own_memory, fresh=True).result()
    assert forked >= 190 and fresh < 100, (forked, fresh)
    assert os.getpid() not in (forked_pid, fresh_pid) and name == "ls-own_memory"
    assert held[-1] == 1.0


def die_unless_in(parent: int, n: int) -> tuple[int, int]:
    if os.getpid() != parent:
        os._exit(9)
    return where(n)


def test_a_fresh_childs_errors_come_back_and_one_that_dies_is_replaced_by_the_parent():
    with pytest.raises(RuntimeError, match="ValueError: no square for 4"):
        Background(fail, 4, fresh=True).result()
    with pytest.raises(RuntimeError, match="(Pickling|Attribute)Error"):  # it must import the function
        Background(lambda: 4, fresh=True).result()
    assert Background(die_unless_in, os.getpid(), 5, fresh=True).result() == (os.getpid(), 25)


def running_fresh(pid: int) -> bool:
    """Whether ``pid`` is the new interpreter: its script is the fresh start (between fork and exec
    a process's command line may read empty for a moment)."""
    fields = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    return len(fields) > 2 and fields[2].startswith(b"import os, pickle")


def test_a_fresh_child_does_not_outlive_its_parent():
    script = """
import time
from postprocess.background import Background
job = Background(time.sleep, 600, fresh=True)
print(job._pid, flush=True)
time.sleep(600)
"""
    process = subprocess.Popen([sys.executable, "-c", script], cwd=ROOT, stdout=subprocess.PIPE, text=True)
    child = int(process.stdout.readline())
    deadline = time.monotonic() + 20  # until it is the new interpreter, asleep
    while not running_fresh(child):
        assert time.monotonic() < deadline
        time.sleep(0.05)
    process.kill()
    process.wait()
    if not gone(child, timeout=5.0, interval=0.05):
        os.kill(child, signal.SIGKILL)
        pytest.fail("the fresh child outlived its parent")


def watch_the_parent(seconds: float, started: str) -> tuple[bool, bool]:
    """Whether the parent waited at the start (``started`` then written), and whether it did within
    ``seconds``."""
    at_start = parent_waits()
    Path(started).write_text("started")
    deadline = time.monotonic() + seconds
    while not parent_waits() and time.monotonic() < deadline:
        time.sleep(0.01)
    return at_start, parent_waits()


@pytest.mark.parametrize("fresh", [False, True])
def test_a_child_learns_when_its_parent_starts_to_wait_for_it(fresh, tmp_path):
    """``parent_waits``: false while the parent goes on with its own work, true once it waits for
    the value (so a child may then take the idle core too); false outside any child."""
    mark = tmp_path / "started"
    job = Background(watch_the_parent, 20.0, str(mark), fresh=fresh)
    deadline = time.monotonic() + 60
    while not mark.exists() and time.monotonic() < deadline:  # the parent at work till the child looked
        time.sleep(0.02)
    started = time.monotonic()
    assert job.result() == (False, True)
    assert time.monotonic() - started < 10  # seen at once, not at the deadline
    assert not parent_waits()


def test_workers_are_the_cores_this_process_may_use():
    assert 1 <= available_workers() <= (os.cpu_count() or 1)


def test_chunks_shared_by_two_processes_come_back_in_order():
    from postprocess import background

    def work(part: list[int]) -> list[tuple[int, int]]:
        time.sleep(0.005)  # work that takes time: the second process is up before the first is done
        return [(os.getpid(), n * 2) for n in part]

    items = list(range(1000))
    results = background.in_chunks(work, items, chunk=7)
    assert [n for part in results for _, n in part] == [n * 2 for n in items]
    assert len({pid for part in results for pid, _ in part}) == 2  # both processes took chunks
    assert background.in_chunks(lambda part: list(part), items, fork=False, chunk=300) == [
        items[:300], items[300:600], items[600:900], items[900:]]


def test_chunks_the_second_process_took_are_done_here_when_it_dies():
    from postprocess import background

    def work(part: list[int]) -> list[tuple[int, int]]:
        if os.getpid() != PARENT and part[0] >= 50:
            os._exit(9)  # the child dies after some chunks
        return [(os.getpid(), n) for n in part]

    results = background.in_chunks(work, list(range(100)), chunk=5)
    assert [n for part in results for _, n in part] == list(range(100))


def test_chunks_the_second_process_finished_are_kept_when_it_dies_later():
    """The second process's results are saved as each chunk is done: it dies on its third chunk, and
    only that chunk is done again here, not the two it finished."""
    from postprocess import background

    finished: list[int] = []  # in the child: the chunks it has finished

    def work(part: list[int]) -> list[tuple[int, int]]:
        if os.getpid() == PARENT:
            time.sleep(0.02)  # a slower first process: the second takes chunks too
        elif len(finished) == 2:
            os._exit(9)
        else:
            finished.append(part[0])
        return [(os.getpid(), n) for n in part]

    results = background.in_chunks(work, list(range(100)), chunk=5)
    assert [n for part in results for _, n in part] == list(range(100))
    assert sum(1 for part in results if part[0][0] != PARENT) == 2


def test_a_child_does_not_outlive_its_parent():
    """A run killed (kill -9, Ctrl-C) leaves no child computing on."""
    script = """
import os, sys, time
from postprocess.background import Background
def forever():
    print(os.getpid(), flush=True)
    time.sleep(600)
job = Background(forever)
time.sleep(600)
"""
    process = subprocess.Popen([sys.executable, "-c", script], cwd=ROOT, stdout=subprocess.PIPE, text=True)
    child = int(process.stdout.readline())
    process.kill()
    process.wait()
    if not gone(child, timeout=5.0, interval=0.05):
        os.kill(child, signal.SIGKILL)
        pytest.fail("the child outlived its parent")


def _own_name() -> str:
    return Path(f"/proc/{os.getpid()}/comm").read_text().strip()


def _names_of(items: list[int]) -> list[str]:
    time.sleep(0.05)  # long enough for the child to take some chunks
    return [_own_name()] * len(items)


def test_a_child_is_named_after_its_work_where_ps_and_the_memory_timeline_show_it():
    assert Background(_own_name).result() == "ls-own_name"
    assert Background(_own_name, name="ls-tfidf").result() == "ls-tfidf"
    names = {name for part in in_chunks(_names_of, list(range(40)), chunk=1) for name in part}
    assert "ls-names_of" in names and _own_name() in names  # this process kept its own name


def wait_for_the_pipe(fd: int) -> int:
    return len(os.read(fd, 1))


def test_no_second_process_is_forked_while_a_child_works_on_the_other_core():
    """``worth_a_fork``: a child at work counts as a process working (two on two cores: no third);
    once it has exited it no longer does, though not yet collected, and its value still comes back.
    A forked child counts its parent as working."""
    from postprocess.background import SPLIT_MIN_ITEMS, processes_working, worth_a_fork

    assert processes_working() == 1 and worth_a_fork(SPLIT_MIN_ITEMS, 2)
    read, write = os.pipe()
    try:
        job = Background(wait_for_the_pipe, read)
        assert processes_working() == 2
        assert not worth_a_fork(SPLIT_MIN_ITEMS, 2)
        assert worth_a_fork(SPLIT_MIN_ITEMS, 3)  # three cores: a third process may still work
        os.write(write, b"x")
        deadline = time.monotonic() + 30
        while processes_working() > 1 and time.monotonic() < deadline:
            time.sleep(0.01)
        assert processes_working() == 1 and worth_a_fork(SPLIT_MIN_ITEMS, 2)  # exited, not collected
        assert job.result() == 1
    finally:
        os.close(read)
        os.close(write)
    assert Background(processes_working).result() == 2  # the child and its parent
    assert not Background(worth_a_fork, SPLIT_MIN_ITEMS, 2).result()


def megabyte(part: list[int]) -> bytes:
    time.sleep(0.002)  # both processes take chunks
    return bytes([part[0] % 256]) * 1_000_000


def test_neither_process_holds_the_chunks_results_they_are_read_back_one_at_a_time():
    """Both processes write each chunk's result to a file as it is made: when the pass ends this
    process holds none of the 60 MB the chunks made, and reading them in order holds one at a time."""
    import tracemalloc

    tracemalloc.start()
    try:
        results = in_chunks(megabyte, list(range(60)), chunk=1)
        held, _ = tracemalloc.get_traced_memory()
        tracemalloc.reset_peak()
        firsts = [result[0] for result in results]
        _, reading = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert firsts == list(range(60))
    assert len(results) == 60 and results[-1][:1] == bytes([59]) and [r[0] for r in results[58:]] == [58, 59]
    assert held < 5_000_000, held  # this process's ~30 chunks, 30 MB, were held before
    assert reading < 5_000_000, reading
