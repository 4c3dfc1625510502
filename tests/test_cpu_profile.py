"""benchmarks/cpu_profile.py: py-spy's raw stacks read into CPU seconds by step, function and process."""

from __future__ import annotations

from pathlib import Path

from crawlkit import module_from_file

ROOT = Path(__file__).resolve().parents[1]

#: py-spy's raw format (``--subprocesses``): a stack's frames joined by ";", its samples after a
#: space; a forked child's stack starts with the parent's process frame and the frames up to the
#: fork, then its own process frame.
PARENT, MAIN = 'process 10:"python3 -m postprocess run"', "main (postprocess/cli.py:396)"
FORK = "Background.__init__ (postprocess/background.py:96)"
CHILD, OTHER_CHILD = 'process 11:"python3 -m postprocess run"', 'process 12:"python3 -m postprocess run"'
STACKS = [
    ([PARENT, MAIN, "stage_embed (postprocess/cli.py:159)", "Session.get_crawl (postprocess/cli.py:131)",
      "load_crawl (postprocess/stages/load.py:694)"], 40),
    ([PARENT, MAIN, "stage_rank (postprocess/cli.py:261)", "learn_confidence (postprocess/pipeline.py:108)",
      "candidate_pool (postprocess/pipeline.py:66)"], 20),
    ([PARENT, MAIN, "stage_rank (postprocess/cli.py:263)", "candidate_pool (postprocess/pipeline.py:66)",
      "find_candidates (postprocess/stages/candidates.py:181)"], 30),
    ([PARENT, MAIN, "stage_rank (postprocess/cli.py:248)",
      "SiteEvidence.__init__ (postprocess/stages/lexical.py:537)", FORK,
      CHILD, "_lexical_neighbours (postprocess/stages/lexical.py:183)"], 50),
    ([PARENT, MAIN, "stage_anchors (postprocess/cli.py:294)", "anchor_pool (postprocess/pipeline.py:80)",
      FORK, OTHER_CHILD, "source_text (postprocess/stages/anchors.py:303)"], 60),
    ([PARENT, "<module> (/usr/lib/python3.11/runpy.py:88)"], 2),
]
RAW = "".join(";".join(frames) + f" {samples}\n" for frames, samples in STACKS)


def _cpu_profile():  # noqa: ANN202 - the module in benchmarks/ (not a package)
    return module_from_file("cpu_profile", ROOT / "benchmarks" / "cpu_profile.py")


def test_every_stack_counts_in_the_outermost_step_it_passes_through(tmp_path):
    raw = tmp_path / "profile.txt"
    raw.write_text(RAW)
    steps, functions, processes, total = _cpu_profile().summarise(raw, rate=10)
    assert total == 20.2
    # a confidence fold's ranking is the learning's; a forked child's work is the step that forked it
    assert steps == {"load": 4.0, "confidence learning": 2.0, "ranking": 3.0,
                     "lexical neighbours (TF-IDF)": 5.0, "anchoring": 6.0, "other": 0.2}
    assert processes == {"10": 9.2, "11": 5.0, "12": 6.0}
    # a function's time holds its calls', counted once a stack, whatever line it stood at
    assert functions["candidate_pool (postprocess/pipeline.py)"] == 5.0
    assert functions["main (postprocess/cli.py)"] == 20.0
    assert functions["<module> (runpy.py)"] == 0.2


def test_a_child_started_with_a_script_of_several_lines_is_read_whole(tmp_path):
    """A fresh child (``python3 -c`` with a script of several lines) has its command line's line breaks
    in its stacks' text: each such stack is read whole, its samples in its step and its process."""
    fresh = ('process 13:"python3 -c import os, pickle, sys\n'
             'call = os.fdopen(int(sys.argv[1]), \'rb\')\nrun(2)"')
    raw = tmp_path / "profile.txt"
    raw.write_text(RAW + ";".join([PARENT, MAIN, "stage_rank (postprocess/cli.py:248)",
                                   "SiteEvidence.__init__ (postprocess/stages/lexical.py:537)", FORK, fresh,
                                   "_lexical_neighbours (postprocess/stages/lexical.py:183)"]) + " 30\n")
    steps, _, processes, total = _cpu_profile().summarise(raw, rate=10)
    assert round(total, 6) == 23.2 and steps["lexical neighbours (TF-IDF)"] == 8.0
    assert processes["13"] == 3.0


def test_without_py_spy_or_a_profile_it_says_so(tmp_path, monkeypatch, capsys):
    import pytest

    module = _cpu_profile()
    with pytest.raises(SystemExit) as exited:
        module.main(["--raw", str(tmp_path / "none.txt")])
    assert exited.value.code == 2 and "no profile at" in capsys.readouterr().err
    monkeypatch.setattr(module.shutil, "which", lambda name: None)
    with pytest.raises(SystemExit, match="py-spy is not installed"):
        module.main(["--raw", str(tmp_path / "p.txt"), "--crawl", str(tmp_path), "--out", str(tmp_path)])


def test_a_failed_profiled_run_is_a_one_line_error_not_a_summary(tmp_path, monkeypatch):
    """When the run under py-spy fails (a missing crawl, say), the profile is not summarised as if whole."""
    import pytest

    module = _cpu_profile()
    failing = tmp_path / "py-spy"
    failing.write_text("#!/bin/sh\necho 'postprocess: no crawl at /nowhere' >&2\nexit 2\n")
    failing.chmod(0o755)
    monkeypatch.setattr(module.shutil, "which", lambda name: str(failing))
    raw = tmp_path / "p.txt"
    raw.write_text(RAW)  # an earlier profile at that path is not read as this run's
    with pytest.raises(SystemExit, match=r"the profiled run failed \(exit 2\)"):
        module.main(["--raw", str(raw), "--crawl", str(tmp_path / "nowhere"), "--out", str(tmp_path)])
