"""`--executor ray`: the model stages on a pool of Ray actors, one engine per actor for the whole
build, with the local build's keys, seeds and cache. Real Ray (2 CPUs); scripted engines in the
actors for the logic, the embedded model for one smoke run."""

import os
import shutil
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
from datasets import Dataset, load_from_disk

import lettuce_build
from lettuce_build.builds.storage.folder import BuildDir
from lettuce_build.core.errors import BackendError
from lettuce_build.engine.completions import Completions, StreamingCompletions
from lettuce_build.engine.runner import Runner
from lettuce_build.llm.cache import RequestCache
from lettuce_build.llm.protocol import ChatRequest
from lettuce_build.llm.ray_pool import DEPTH, RayBackend, RayOptions
from lettuce_build.llm.settings import EngineSettings

from ..support.documents import flaky_respond, write_many_readmes
from ..support.processes import processes_marked
from ..support.ray_engines import LoggedEngine
from ..support.scripted import ScriptedBackend
from ..support.stages import COUNTRIES, CapitalStage, correct

ray = pytest.importorskip("ray")

REPO_ROOT = Path(__file__).resolve().parents[2]
MODEL = "smollm2-135m"


@pytest.fixture(scope="module", autouse=True)
def ray_cluster():
    """A local Ray instance of 2 CPUs; its workers import the tests' engines from the repository."""
    ray.init(
        num_cpus=2,
        include_dashboard=False,
        log_to_driver=False,
        runtime_env={"env_vars": {"PYTHONPATH": str(REPO_ROOT)}},
    )
    yield
    ray.shutdown()


def pool(engine, actors=2, batch_size=8):
    # half a CPU per actor: two actors and Ray Data's own tasks fit the 2 CPUs
    return RayBackend(engine, RayOptions(actors=actors, batch_size=batch_size, cpus_per_actor=0.5))


def rows(out):
    dataset = load_from_disk(str(out / "dataset"))
    return {split: dataset[split].to_list() for split in dataset}


def local_and_ray(tmp_path, engine, batch_size):
    """The same readme build of 24 items into tmp_path/local (scripted, in process) and
    tmp_path/ray (``engine`` in a pool of 2 actors)."""
    docs = write_many_readmes(tmp_path / "docs", 24)
    local = ScriptedBackend(flaky_respond)
    for out, backend in (("local", local), ("ray", pool(engine, batch_size=batch_size))):
        lettuce_build.build(
            "readme", input=str(docs), out=tmp_path / out, batch_size=batch_size, backend=backend
        )


def same_build(a, b):
    assert rows(a) == rows(b)
    assert BuildDir(a).failures() == BuildDir(b).failures()
    assert BuildDir(a).read_manifest().counts == BuildDir(b).read_manifest().counts


def test_a_ray_build_writes_the_local_build_s_rows_and_requests(tmp_path):
    log = tmp_path / "asked.log"
    local_and_ray(tmp_path, LoggedEngine(log), batch_size=8)
    same_build(tmp_path / "ray", tmp_path / "local")
    local, remote = RequestCache.in_build(tmp_path / "local"), RequestCache.in_build(tmp_path / "ray")
    assert local.stats().rows == remote.stats().rows == len(log.read_text().splitlines())
    assert len(set(log.read_text().split())) >= 2, "more than one actor answered"
    manifest = BuildDir(tmp_path / "ray").read_manifest()
    assert manifest.backend.backend == "ray/scripted" and manifest.backend.options["ray"]["actors"] == 2


def test_each_engine_starts_once_per_build_across_attempts_waves_and_stages(tmp_path):
    log, loads = tmp_path / "asked.log", tmp_path / "loads.log"
    docs = write_many_readmes(tmp_path / "docs", 24)
    backend = pool(LoggedEngine(log, loads=loads), batch_size=4)
    lettuce_build.build("readme", input=str(docs), out=tmp_path / "ray", batch_size=4, backend=backend)
    stages = BuildDir(tmp_path / "ray").read_manifest().stages
    passes = sum(s.backend_calls for s in stages)
    assert passes >= 4, "question, answer, inject and retries: several passes asked the model"
    started = loads.read_text().split()
    assert len(started) == len(set(started)) == len(set(log.read_text().split())) <= 2
    assert backend._actors == []  # released when the build ended


def test_given_the_local_build_s_cache_a_ray_build_calls_no_model(tmp_path):
    docs = write_many_readmes(tmp_path / "docs", 12)
    lettuce_build.build(
        "readme", input=str(docs), out=tmp_path / "local", backend=ScriptedBackend(flaky_respond)
    )
    (tmp_path / "ray").mkdir()
    shutil.copy(tmp_path / "local" / "cache.sqlite", tmp_path / "ray" / "cache.sqlite")
    log = tmp_path / "asked.log"
    lettuce_build.build("readme", input=str(docs), out=tmp_path / "ray", backend=pool(LoggedEngine(log)))
    same_build(tmp_path / "ray", tmp_path / "local")
    assert not log.exists()
    stages = BuildDir(tmp_path / "ray").read_manifest().stages
    assert sum(s.backend_calls for s in stages) == 0 and sum(s.cache_misses for s in stages) == 0


def test_a_killed_actor_loses_only_its_batches_and_the_build_completes(tmp_path):
    log, marker = tmp_path / "asked.log", tmp_path / "died"
    local_and_ray(tmp_path, LoggedEngine(log, die_on_call=3, marker=marker), batch_size=4)
    assert marker.exists(), "an actor died mid-build"
    same_build(tmp_path / "ray", tmp_path / "local")
    asked = len(log.read_text().splitlines())
    answered = RequestCache.in_build(tmp_path / "ray").stats().rows
    # what the dead actor held (the batch it was answering, and the one queued behind it: the
    # pool keeps DEPTH per actor) is asked again of a restarted actor, nothing else
    assert 0 < asked - answered <= DEPTH * 4


def test_the_pool_takes_a_pass_from_the_driver_as_its_actors_have_room(tmp_path):
    """A pass of 200 requests given as an iterable: when the first batch comes back, the pool
    has taken the batches its 2 actors hold (2 deep) and the next one, not the pass."""
    taken = []

    def the_pass():
        for n in range(200):
            taken.append(n)
            yield ChatRequest.of("Double the number.", f"number {n}", temperature=0.0, max_tokens=8)

    backend = pool(ScriptedBackend(correct, record=False), actors=2, batch_size=8)
    try:
        chunks = backend.stream(the_pass())
        first = next(chunks)
        assert len(taken) <= (2 * DEPTH + 2) * 8 < 200
        positions = [index for index, _ in first] + [index for chunk in chunks for index, _ in chunk]
    finally:
        backend.close()
    assert sorted(positions) == list(range(200)) and len(taken) == 200


def test_an_empty_pass_starts_no_actor():
    backend = pool(ScriptedBackend(correct))
    assert list(backend.stream(iter([]))) == [] and backend._actors == []


@pytest.mark.usefixtures("real_engine")
def test_smoke_the_embedded_engine_in_a_ray_actor(tmp_path):
    """One pass of a structured-output stage on vLLM in an actor (one engine load), then the
    same stage locally on the cache it filled: the same rows, and the local engine never starts."""
    from lettuce_build.llm.vllm_backend import VLLMBackend

    items = Dataset.from_list([{"key": country, "country": country} for country in COUNTRIES])
    cache = RequestCache.in_build(tmp_path)
    remote = Runner(StreamingCompletions(pool(VLLMBackend(MODEL), actors=1), cache)).run(
        items, CapitalStage()
    )
    assert remote.stats.cache_misses == len(COUNTRIES) and remote.stats.backend_calls >= 1
    assert remote.ok.num_rows + len(remote.failures) == len(COUNTRIES)
    assert all(isinstance(city, str) and city for city in remote.ok["city"])
    # options of its own: `started` then tells about this engine, not the session's shared one
    local_engine = VLLMBackend(MODEL, EngineSettings(max_num_seqs=7))
    local = Runner(Completions(local_engine, cache)).run(items, CapitalStage())
    assert not local_engine.started and local.stats.cache_misses == 0
    assert local.ok.to_list() == remote.ok.to_list()


def test_without_ray_the_executor_says_how_to_install_it_before_the_build_starts(monkeypatch):
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "ray" else real(name, *a)
    )
    with pytest.raises(BackendError, match=r"pip install 'lettuce-build\[ray\]'"):
        RayBackend(ScriptedBackend(flaky_respond))


#: a Ray build in a process of its own, as `lettuce-build build --executor ray` runs one
_RAY_DRIVER = """
import sys
from pathlib import Path
import lettuce_build
from lettuce_build.llm.ray_pool import RayBackend, RayOptions
from tests.support.ray_engines import LoggedEngine

docs, out, log = sys.argv[1:4]
engine = LoggedEngine(Path(log))
backend = RayBackend(engine, RayOptions(actors=2, batch_size=4, cpus_per_actor=0.5))
lettuce_build.build("readme", input=docs, out=out, backend=backend)
"""


def test_a_ray_build_killed_with_sigkill_leaves_no_process_of_ray_behind(tmp_path):
    """Ray's local cluster (its store, scheduler and the actors' workers) dies with the build
    that started it, even killed with SIGKILL: nothing is left running, orphaned."""
    docs, log = write_many_readmes(tmp_path / "docs", 200), tmp_path / "asked.log"
    token = uuid.uuid4().hex
    mark, env = f"LB_TEST_MARK={token}", {**os.environ, "PYTHONPATH": str(REPO_ROOT), "LB_TEST_MARK": token}
    command = [sys.executable, "-c", _RAY_DRIVER, str(docs), str(tmp_path / "out"), str(log)]
    driver = subprocess.Popen(
        command, env=env, cwd=REPO_ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    deadline = time.monotonic() + 120
    while not (log.exists() and log.read_text()) and driver.poll() is None and time.monotonic() < deadline:
        time.sleep(0.1)  # until an actor answers: Ray's processes are all up
    assert driver.poll() is None, driver.stderr.read().decode()[-2000:]
    assert len(processes_marked(mark)) > 2  # the driver, Ray's own processes and the actors
    driver.kill()
    driver.wait()
    deadline = time.monotonic() + 10
    while processes_marked(mark) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert processes_marked(mark) == []
