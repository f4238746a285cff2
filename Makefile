# ranking-lab: `make run` to try it, `make test` to check it. Everything else is a helper of those.
SHELL := /bin/bash
.DEFAULT_GOAL := help

VENV   := .venv
PY     := $(VENV)/bin/python
HOST   ?= 127.0.0.1
PORT   ?= 8000
CHROMIUM := /usr/bin/chromium

# The interpreter for the venv: the one .python-version selects through pyenv, else python3.13/3.12.
BOOT_PYTHON := $(shell \
  for c in "$$(pyenv which python 2>/dev/null)" "$$(command -v python3.13)" "$$(command -v python3.12)"; do \
    if [ -n "$$c" ] && "$$c" -c 'import sys; sys.exit(sys.version_info < (3, 12))' 2>/dev/null; then echo "$$c"; break; fi; \
  done)

.PHONY: help run serve test bench lint typecheck messages compilemessages browser clean venv install install-test

help:
	@echo "make run    set up everything (venv, install, migrate, demo data) and serve http://$(HOST):$(PORT)"
	@echo "make serve  the same without the demo data (a team's own install: no demo accounts)"
	@echo "           (both start a background worker beside the web server; Ctrl+C stops both)"
	@echo "make test   install test tools, then lint, migration check and every test (browser tests too)"
	@echo "make bench  benchmarks: ratios against trec_eval's code and scikit-learn"
	@echo "make messages / compilemessages   refresh / compile the zh-Hans translation catalog"

$(PY):
	@if [ -z "$(BOOT_PYTHON)" ]; then \
	  echo "error: ranking-lab needs Python >= 3.12 (Django 6). Install it with pyenv (\`pyenv install 3.13\`, read from .python-version) or put python3.13 on PATH." >&2; \
	  exit 1; fi
	"$(BOOT_PYTHON)" -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip

venv: $(PY)

$(VENV)/.installed: pyproject.toml | $(PY)
	$(PY) -m pip install --quiet -e .
	@touch $@

$(VENV)/.installed-test: pyproject.toml | $(PY)
	$(PY) -m pip install --quiet -e ".[test]"
	@touch $@ $(VENV)/.installed

install: $(VENV)/.installed
install-test: $(VENV)/.installed-test

compilemessages: | $(PY)
	@command -v msgfmt >/dev/null || $(MAKE) --no-print-directory apt-gettext
	$(PY) manage.py compilemessages --ignore=.venv -v0

messages: | $(PY)
	$(PY) manage.py makemessages -l zh_Hans --no-obsolete --ignore=.venv --ignore=var --ignore=tests

.PHONY: apt-gettext
apt-gettext:
	@if [ "$$(id -u)" = 0 ]; then apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq gettext >/dev/null; \
	 else echo "error: GNU gettext (msgfmt) is missing: sudo apt-get install gettext" >&2; exit 1; fi

# Browser tests drive Debian's Chromium; Playwright cannot download its own browser here.
browser:
	@if [ ! -x $(CHROMIUM) ]; then \
	  if [ "$$(id -u)" = 0 ]; then echo "Installing Debian chromium for the browser tests..."; \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; \
	  else echo "error: $(CHROMIUM) is missing: sudo apt-get install chromium" >&2; exit 1; fi; fi

# The web server and a background worker (large imports, freezes), stopped together: Ctrl+C reaches
# both, and the worker is stopped too when the server exits on its own.
SERVE_AND_WORK = \
	echo "Serving on http://$(HOST):$(PORT)/ with a background worker (Ctrl+C stops both)"; \
	$(PY) manage.py db_worker --no-reload & worker=$$!; \
	trap 'kill $$worker 2>/dev/null; wait $$worker 2>/dev/null' EXIT; \
	$(PY) manage.py runserver $(HOST):$(PORT)

run: install compilemessages
	$(PY) manage.py migrate --noinput
	$(PY) manage.py demo
	@$(SERVE_AND_WORK)

# A team's own install: the demo's accounts have a published password, so they are not made here.
serve: install compilemessages
	$(PY) manage.py migrate --noinput
	@$(SERVE_AND_WORK)

lint: install-test
	$(PY) -m ruff check .

typecheck: install-test
	$(PY) -m mypy annotator evaluation

test: install-test compilemessages browser
	$(PY) -m ruff check .
	$(PY) -m ruff format --check .
	$(PY) -m mypy annotator evaluation
	$(PY) manage.py makemigrations --check --dry-run
	$(PY) -m pytest

bench: install-test
	@for b in tests/benchmarks/bench_*.py; do echo "== $$b"; $(PY) $$b || exit 1; done

clean:
	rm -rf $(VENV) var .pytest_cache .ruff_cache .mypy_cache
	find . -name __pycache__ -type d -prune -exec rm -rf {} +
	find . -name '*.mo' -delete
