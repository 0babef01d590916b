"""`lettuce-build translate` stops when asked, as a build does: Ctrl-C ends it within seconds with
one line and status 130, its manifest says ``interrupted``, and the same command finishes it
without asking again what was answered. A real process group, a loopback endpoint."""

import json
import os
import signal
import subprocess
import sys
import threading
import time

from ..support.openai_server import serve
from .test_translate import translator, write_rows

CLI = [sys.executable, "-c", "from lettuce_build.cli import main; main()"]


class SlowTranslator:
    """The scripted translator behind a loopback endpoint, slow until told otherwise."""

    def __init__(self) -> None:
        self.delay, self.answered, self.lock = 0.4, 0, threading.Lock()

    def __call__(self, request) -> str:
        time.sleep(self.delay)
        with self.lock:
            self.answered += 1
        return translator(request)


def test_ctrl_c_stops_a_translation_with_one_line_and_the_rerun_finishes_it(tmp_path):
    rows, out = write_rows(tmp_path / "rows.jsonl"), tmp_path / "de"
    model = SlowTranslator()
    with serve(model) as url:
        command = [*CLI, "translate", str(rows), "--to", "de", "--to", "fr", "--out", str(out)]
        command += ["--backend", "openai", "--base-url", url, "--model", "scripted", "--concurrency", "1"]
        env = {**os.environ, "OPENAI_API_KEY": "x"}
        process = subprocess.Popen(
            command,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )
        deadline = time.monotonic() + 120
        while model.answered < 2 and time.monotonic() < deadline and process.poll() is None:
            time.sleep(0.05)
        assert process.poll() is None, process.communicate()
        asked_at = time.monotonic()
        os.killpg(process.pid, signal.SIGINT)
        _, err = process.communicate(timeout=30)
        assert process.returncode == 130 and time.monotonic() - asked_at < 10, err[-2000:]
        [line] = [line for line in err.splitlines() if line.startswith("interrupted: ")]
        assert "answers kept" in line and "run the same command to continue" in line
        assert json.loads((out / "manifest.json").read_text())["status"] == "interrupted"
        model.delay = 0
        rerun = subprocess.run(command, env=env, capture_output=True, text=True, timeout=300)
        assert rerun.returncode == 0, rerun.stderr[-2000:]
    assert "German (de): kept 2 of 3" in rerun.stdout
    assert json.loads((out / "manifest.json").read_text())["status"] == "finished"
    # 3 samples x 2 languages: an answer request each, a context request for each answer kept
    # (German 2; French fails its language check), and a retry of each failed answer (German 1,
    # French 3): 14; the one in flight at the signal may be asked twice
    assert model.answered <= 14 + 1
