"""Work on the second core: a function run in a forked child while the parent goes on.

A fork shares the parent's memory copy-on-write, so the child starts with everything the
parent built (the crawl, the evidence, the anchor finder) without copying or pickling it;
only the result travels back, pickled through an unlinked temporary file (so a child leaves,
its memory freed, as soon as its value is written; ``in_chunks``: a chunk at a time). The
child runs torch on one thread: a fork after torch's OpenMP pool has run would otherwise hang
in the child's first parallel operation. Where there is no ``fork`` (or one core, or
``workers`` 1) the function simply runs in the parent when its result is asked for; if
the child dies (killed for memory, say) it runs again there, so a result is never lost.
``in_chunks`` shares a pass over many items (pages, sources) with a forked second process, chunk
by chunk, whoever is free first.

A ``fresh`` child starts a new interpreter right after the fork (``exec``): it holds none of the
parent's memory, and so none of the parent's pages it would otherwise keep copies of as the parent
goes on writing them (a long job beside a busy parent ends up holding most of the parent's heap as it
was at the fork). Its function and arguments travel pickled, through a second temporary file.
"""

from __future__ import annotations

import gc
import multiprocessing
import os
import pickle
import struct
import sys
import tempfile
from collections.abc import Callable, Sequence
from typing import IO, Generic, TypeVar

from postprocess.memory import drop_file_pages, give_back
from postprocess.stages.spill import read_at

T = TypeVar("T")
R = TypeVar("R")
Item = TypeVar("Item")


#: Passes over fewer items than this (pages) stay in one process: a fork would cost more.
SPLIT_MIN_ITEMS = 2000
#: The same for passes whose items cost a millisecond or more each (ranking or anchoring a source):
#: the confidence model's folds rank and anchor a sample of 1,500 sources.
SPLIT_MIN_SOURCES = 500


#: Forked children this process started and has not collected (their pids).
_children: set[int] = set()
#: Whether this process is a forked child (its parent is taken to be working too).
_in_child = False
#: The forked children (pids) this process froze its objects for (``_freeze``), not yet collected.
_frozen_for: set[int] = set()
#: In a child: the file whose first byte its parent sets when it starts to wait for the child's value
#: (``parent_waits``); None in a process that no ``Background`` started.
_waited_fd: int | None = None


def parent_waits() -> bool:
    """In a ``Background`` child (fresh or not): whether its parent now waits, idle, for its value
    (``Background.wait``), so that work split over a second process would take a core no one uses.
    A look at one byte of a file: cheap enough between steps of a few thousand items."""
    if _waited_fd is None:
        return False
    try:
        return os.pread(_waited_fd, 1, 0) == b"1"
    except OSError:
        return False


def _freeze() -> None:
    """Before a fork that shares this heap: every object tracked now is moved out of the cyclic
    collector's reach (``gc.freeze``), in this process and in the child, until the child is collected.
    A full collection writes to every tracked object's header, so each process would copy every page
    of them that the other still shares (the crawl's pages, the names, the finder) once it collected."""
    gc.freeze()


def _thaw(pid: int | None = None) -> None:
    """The child ``pid`` collected (None: a fork that failed): the objects frozen for it are the
    collector's again once no other child shares them."""
    if pid is not None:
        _frozen_for.discard(pid)
    if not _frozen_for and not _in_child:
        gc.unfreeze()


def processes_working() -> int:
    """Processes of this run at work now, as this one sees them: itself, the forked children it
    started that have not exited (an exited one not yet collected is done), and its parent when
    it is itself a forked child."""
    alive = 0
    for pid in list(_children):
        if not hasattr(os, "waitid"):  # no way to look without collecting: taken to be working
            alive += 1
            continue
        try:  # WNOWAIT: only look; ``Background.result`` collects it
            if os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is None:
                alive += 1
        except ChildProcessError:
            _children.discard(pid)
            _thaw(pid)
    return 1 + alive + int(_in_child)


def worth_a_fork(items: int, workers: int, min_items: int | None = None) -> bool:
    """Whether work over ``items`` items goes to a second process when ``workers`` may run: enough
    items (``min_items``, else ``SPLIT_MIN_ITEMS``), and fewer than ``workers`` processes at work
    already (a third process on two cores makes nothing sooner, and holds its own memory beside the
    others': 100k synthetic pages, the finder's passes forked beside the TF-IDF child made the run's
    largest tree, 2.43 GB)."""
    least = SPLIT_MIN_ITEMS if min_items is None else min_items
    return workers > 1 and items >= least and processes_working() < workers


def available_workers() -> int:
    """Processes worth running at once on this machine (cores this process may use)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not Linux
        return max(1, os.cpu_count() or 1)


def _prctl(option: int, value: int | bytes) -> None:
    """Linux's ``prctl(option, value)`` for this process; nothing where there is none."""
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(option, value)
    except (OSError, AttributeError):
        pass


def _die_with_parent() -> None:
    """Linux: the child gets SIGKILL when the parent dies (killed, interrupted), no orphan computing on."""
    import signal

    _prctl(1, int(signal.SIGKILL))  # PR_SET_PDEATHSIG


def named(name: str) -> None:
    """Linux: this process's name (``/proc/PID/comm``, what ``ps``, ``top`` and the memory timeline
    show), cut to the 15 characters the kernel keeps."""
    _prctl(15, name.encode()[:15] + b"\0")  # PR_SET_NAME


def child_name(function: Callable[..., object]) -> str:
    """A forked child's name: ``ls-`` and the function it runs (the enclosing one for a closure)."""
    qualname = getattr(function, "__qualname__", "") or getattr(function, "__name__", "work")
    return "ls-" + qualname.split(".")[0].lstrip("_")


def _single_threaded() -> None:
    """The child's torch on one thread (its OpenMP pool is the parent's and did not survive the fork)."""
    torch = sys.modules.get("torch")
    if torch is not None:
        torch.set_num_threads(1)
    from postprocess.stages import output

    output.QUIET = True  # progress bars are the parent's


class Background(Generic[T]):
    """``function(*args)`` computed in a forked child (when ``fork`` is true and possible); ``result()``
    waits for it."""

    def __init__(self, function: Callable[..., T], *args: object, fork: bool = True,
                 name: str | None = None, fresh: bool = False) -> None:
        """``fresh``: the child is a new interpreter (see the module's docstring); ``function`` and
        ``args`` must then pickle (a module-level function, arguments that carry what they read)."""
        self._function, self._args = function, args
        self.fresh = fresh
        self._name = name or child_name(function)
        self._pid: int | None = None
        self._file: IO[bytes] | None = None
        self._waiting: IO[bytes] | None = None  # see ``parent_waits``
        self._status: int | None = None  # the child's exit status, once ``wait`` collected it
        self._done = False
        self._value: T
        self.forked = fork and hasattr(os, "fork")
        if not self.forked:
            return
        sys.stdout.flush()
        sys.stderr.flush()
        give_back()  # freed memory the child would copy by allocating into it
        # The value goes back through an unlinked temporary file, not a pipe: a child that has its
        # value writes it and leaves at once, freeing its memory, instead of waiting (its memory
        # held) until the parent reads a pipe too full to take it.
        self._file = tempfile.TemporaryFile(prefix="linkspider-background-")
        # its first byte set when this process waits for the value (``parent_waits``, in the child)
        self._waiting = tempfile.TemporaryFile(prefix="linkspider-waiting-")
        parent = os.getpid()
        if not fresh:  # a fresh child leaves this heap at once: nothing to keep shared
            _freeze()
        try:
            pid = os.fork()
        except OSError:
            _thaw()
            raise
        if pid == 0:  # the child: compute, send, leave without running the parent's exit handlers
            global _in_child, _waited_fd
            _in_child = True
            _waited_fd = self._waiting.fileno()
            _children.clear()  # the parent's, not this process's
            _frozen_for.clear()
            code = 1
            try:  # whatever fails here, the child leaves (never runs on as a copy of the parent)
                _die_with_parent()
                if os.getppid() != parent:  # it died before the line above: no signal will come
                    os._exit(1)
                if fresh:  # returns only if it failed
                    _exec_fresh(self._name, function, args, self._file, self._waiting)
                else:
                    code = _answer(self._name, function, args, self._file)
            finally:
                os._exit(code)
        self._pid = pid
        _children.add(pid)
        if not fresh:
            _frozen_for.add(pid)

    @property
    def done(self) -> bool:
        """Whether the value was computed here already (``now``)."""
        return self._done

    def now(self) -> Background[T]:
        """Without a child: compute the value here and now (``result`` returns it), and let the
        arguments go; the caller chooses when this process does the work."""
        if self._pid is None and not self._done:
            self._value, self._done, self._args = self._function(*self._args), True, ()
        return self

    def forget(self, *values: object) -> None:
        """Let this process free ``values``, arguments the forked child already has (its own copy):
        they are dropped from the arguments kept here, so a run here (when the child died without
        answering) gets None for each, and the function must be able to make them again."""
        if self.forked:
            self._args = tuple(None if any(a is v for v in values) else a for a in self._args)

    def wait(self) -> None:
        """Wait until the child has left (its memory freed), its value not read yet (``result`` reads
        it): this process's next steps do not stand beside it, and its value takes no memory here."""
        if self._pid is not None and self._status is None:
            if self._waiting is not None:  # the child may now split what is left over a second process
                os.pwrite(self._waiting.fileno(), b"1", 0)
            _, self._status = os.waitpid(self._pid, 0)
            _children.discard(self._pid)
            _thaw(self._pid)
            if self._waiting is not None:
                self._waiting.close()
                self._waiting = None

    def result(self) -> T:
        """The function's value: the child's, or computed here when there was no child or it died
        without one. An exception the function raised in the child is raised here as RuntimeError."""
        if self._done:
            return self._value
        if self._pid is None:
            return self._function(*self._args)
        self.wait()
        status, self._status, self._pid = self._status, None, None
        assert status is not None
        assert self._file is not None
        with self._file as written:
            written.seek(0, os.SEEK_END)
            empty = written.tell() == 0
            written.seek(0)
            # read from the file as it is unpickled: an array's bytes go straight into the array
            answer = None if empty or os.WIFSIGNALED(status) else pickle.load(written)
        self._file = None
        if answer is None:  # the child died (out of memory, a signal): do it here
            return self._function(*self._args)
        status, value, *os_error = answer
        if status != "ok":
            if os_error and os_error[0] is not None:
                raise OSError(*os_error[0])
            raise RuntimeError(f"background work failed: {value}")
        return value


def _answer(name: str, function: Callable[..., object], args: tuple[object, ...], written: IO[bytes]) -> int:
    """In the child: ``function(*args)``'s value (or its error) pickled into ``written``; the exit code."""
    code = 0
    try:
        named(name)
        _single_threaded()
        # pickled straight into the file: an array's bytes are written from the array,
        # not first copied into one pickled string beside it (held twice, were it large)
        pickle.dump(("ok", function(*args)), written, protocol=pickle.HIGHEST_PROTOCOL)
    except BaseException as error:  # noqa: BLE001 - every failure goes back to the parent
        code = 1
        _error_into(written, error)
    written.flush()
    return code


def _error_into(written: IO[bytes], error: BaseException) -> None:
    """The child's error for the parent: its text, and an ``OSError``'s errno, message and file (a
    full disk in the child is one in the parent: ``errors.environment_problem`` names it)."""
    written.seek(0)
    written.truncate()  # what a pickling that failed half-way wrote
    os_error = ((error.errno, error.strerror, error.filename)
                if isinstance(error, OSError) and error.errno is not None else None)
    pickle.dump(("error", f"{type(error).__name__}: {error}", os_error), written)
    written.flush()


#: What a fresh child's interpreter runs: the parent's import path from the call file, then the call.
_FRESH_START = ("import os, pickle, sys\n"
                "call = os.fdopen(int(sys.argv[1]), 'rb')\n"
                "sys.path[:] = pickle.load(call)\n"
                "from postprocess.background import _fresh_child\n"
                "_fresh_child(call, int(sys.argv[2]), int(sys.argv[3]))\n")


def _exec_fresh(name: str, function: Callable[..., object], args: tuple[object, ...],
                written: IO[bytes], waiting: IO[bytes]) -> None:
    """In the forked child: the call pickled into a temporary file, then a new interpreter in this
    process (``exec``) that makes it (``_fresh_child``). Returns only if that failed, its error
    written."""
    try:
        call = tempfile.TemporaryFile(prefix="linkspider-call-")
        pickle.dump(sys.path, call)
        pickle.dump((name, function, args), call, protocol=pickle.HIGHEST_PROTOCOL)
        call.flush()
        call.seek(0)
        os.set_inheritable(call.fileno(), True)
        os.set_inheritable(written.fileno(), True)
        os.set_inheritable(waiting.fileno(), True)
        os.execv(sys.executable, [sys.executable, "-c", _FRESH_START, str(call.fileno()),
                                  str(written.fileno()), str(waiting.fileno())])
    except BaseException as error:  # noqa: BLE001 - every failure goes back to the parent
        _error_into(written, error)


def _fresh_child(call: IO[bytes], result_fd: int, waited_fd: int) -> None:
    """A fresh child's interpreter: the call read (its file then closed and gone), made, answered;
    ``waited_fd``: the file ``parent_waits`` reads."""
    global _in_child, _waited_fd
    _in_child = True
    _waited_fd = waited_fd
    _die_with_parent()  # kept across ``exec`` as it is; set again all the same
    code = 1
    written = os.fdopen(result_fd, "w+b")
    try:
        try:
            with call:
                name, function, args = pickle.load(call)
        except BaseException as error:  # noqa: BLE001 - every failure goes back to the parent
            _error_into(written, error)
        else:
            code = _answer(name, function, args, written)
    finally:
        os._exit(code)


#: Items per chunk that ``in_chunks`` hands out (small enough to balance, big enough not to wait on the lock).
CHUNK = 64


def in_chunks(work: Callable[[Sequence[Item]], R], items: Sequence[Item], fork: bool = True,
              chunk: int | None = None, name: str | None = None) -> Sequence[R]:
    """``work`` over chunks of ``items`` shared by this process and a forked second one: each takes the
    next chunk when it is free (a shared counter), so a process slowed by other work (the confidence
    model's, on the same cores) does less. The results come back in chunk order, as one process
    would have made them. Both processes write each chunk's result, pickled, to a temporary file as
    soon as it is made, and keep none of them: the second process held them all till its last
    chunk (~0.5 GB of anchored rows at 100k pages), and this one held its own beside the second
    process's memory (the anchored rows again, ~0.3 GB at the run's largest). The results are read
    back one at a time, when the caller asks for each (``ChunkResults``). A chunk the second process
    finished before dying is not done again. ``name``: the second process's (else ``child_name``'s)."""
    chunk = chunk or CHUNK
    chunks = [items[start:start + chunk] for start in range(0, len(items), chunk)]
    if not (fork and hasattr(os, "fork")) or len(chunks) < 2:
        return [work(part) for part in chunks]
    counter = multiprocessing.get_context("fork").Value("q", 0)
    mine = tempfile.TemporaryFile(prefix="linkspider-chunks-")
    theirs = tempfile.TemporaryFile(prefix="linkspider-chunks-")

    def take(written: IO[bytes]) -> None:
        """Chunks until none is left, each result written to ``written``."""
        while True:
            with counter.get_lock():
                number = counter.value
                counter.value += 1
            if number >= len(chunks):
                return
            _save(written, number, work(chunks[number]))
            # what the chunk read of mapped files (vectors, the page index, the TF-IDF matrix) leaves
            # the resident set: across a million pages' chunks it came to several GB a process
            drop_file_pages()

    parent = os.getpid()

    def take_theirs() -> None:
        """The second process's share; if it died, this process takes what is left (into its own
        file: the dead one's may end in a record cut short)."""
        take(theirs if os.getpid() != parent else mine)

    other = Background(take_theirs, name=name or child_name(work))
    take(mine)
    other.result()  # None; or the child died, and this process took the chunks it had not taken
    done = {number: (theirs, *place) for number, place in _records(theirs).items()}
    done.update((number, (mine, *place)) for number, place in _records(mine).items())
    for number, part in enumerate(chunks):  # chunks the second process took but never finished
        if number not in done:
            done[number] = (mine, *_save(mine, number, work(part)))
    return ChunkResults([done[number] for number in range(len(chunks))])


#: A saved chunk's header: its number and the length of its pickled result.
_RECORD = struct.Struct("<qq")


def _save(written: IO[bytes], number: int, result: object) -> tuple[int, int]:
    """Chunk ``number``'s result appended to ``written``, whole before the next (a forked child leaves
    without flushing): its (offset, length) in the file."""
    data = pickle.dumps(result, protocol=pickle.HIGHEST_PROTOCOL)
    written.write(_RECORD.pack(number, len(data)))
    offset = written.tell()
    written.write(data)
    written.flush()
    return offset, len(data)


def _records(written: IO[bytes]) -> dict[int, tuple[int, int]]:
    """Chunk number → (offset, length) of each whole result in ``written`` (a last one cut short by
    its writer's death is left out)."""
    fd = written.fileno()
    size = os.fstat(fd).st_size
    found: dict[int, tuple[int, int]] = {}
    offset = 0
    while offset + _RECORD.size <= size:
        number, length = _RECORD.unpack(os.pread(fd, _RECORD.size, offset))
        offset += _RECORD.size
        if offset + length > size:
            break
        found[number] = (offset, length)
        offset += length
    return found


class ChunkResults(Sequence[R]):
    """Chunks' results in chunk order, each unpickled from the file it was saved to when it is asked
    for: a caller that merges them one at a time never holds them all. The files go with this object."""

    def __init__(self, places: list[tuple[IO[bytes], int, int]]) -> None:
        self._places = places

    def __len__(self) -> int:
        return len(self._places)

    def __getitem__(self, number):  # noqa: ANN001, ANN204 - an int or a slice, as a list takes
        if isinstance(number, slice):
            return [self[i] for i in range(*number.indices(len(self)))]
        written, offset, length = self._places[number]
        return pickle.loads(read_at(written.fileno(), length, offset, f"chunk {number}'s saved result"))
