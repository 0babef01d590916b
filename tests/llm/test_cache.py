"""A cache opened read-only (a dry run's look at its build's answers) reads what a killed run
left in its log, and writes nothing."""

import subprocess
import sys

from lettuce_build.llm.cache import RequestCache


def test_a_read_only_cache_reads_the_log_a_killed_run_left_and_leaves_no_file(tmp_path):
    path = tmp_path / "cache.sqlite"
    killed = (
        "import os, sys\n"
        "from lettuce_build.llm.cache import RequestCache\n"
        "from lettuce_build.llm.protocol import Completion\n"
        "RequestCache(sys.argv[1]).put_many('m', 'v1', [('k1', Completion(text='kept'))])\n"
        "os._exit(0)\n"  # killed: the answer is in the log, never copied into the file
    )
    subprocess.run([sys.executable, "-c", killed, str(path)], check=True)
    assert path.with_name("cache.sqlite-wal").exists()
    cache = RequestCache(path, read_only=True)
    try:
        assert cache.get_many(["k1"])["k1"].text == "kept"
        cache.count(1, 0)  # a read-only cache keeps no counters: nothing to write
    finally:
        cache.close()

    RequestCache(path).close()  # the next build's run: closed, it copies the log into the file
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cache.sqlite"]
    cache = RequestCache(path, read_only=True)
    try:
        assert cache.get_many(["k1"])["k1"].text == "kept"
    finally:
        cache.close()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cache.sqlite"]  # no log or index left
