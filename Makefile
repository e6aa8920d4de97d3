# Two commands do all set-up on a fresh machine (see README):
#   make serve   -> install into .venv, warm the numba cache, launch the dashboard (offline)
#   make test    -> install into .venv (+ Debian's chromium for browser tests), lint, run all tests
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-stamp
PORT ?= 5006
# Serving safely (README, "Serving a class"): loopback only by default; a classroom sets
# ADDRESS=0.0.0.0, ORIGINS to the host:port the students type and PASSWORD=yes (the class
# password itself from ERMVIZ_PASSWORD or the terminal, never make's command line); ADMIN=yes
# adds the teacher's (ERMVIZ_ADMIN_PASSWORD); PROCS=N worker processes (default: 1 on the
# loopback interface, one per core beyond it).
ADDRESS ?= 127.0.0.1
ORIGINS ?= localhost:$(PORT) 127.0.0.1:$(PORT)
PASSWORD ?=
ADMIN ?=
PROCS ?=
# glibc's malloc for Python's objects too, and two malloc arenas instead of 8 per core:
# measured (benchmarks/results/bench_load.txt), a server that held ten racing sessions
# then kept 496-619 MiB with the defaults and 366-368 MiB with these (330 before any).
SERVE_ENV ?= PYTHONMALLOC=malloc MALLOC_ARENA_MAX=2

.PHONY: test test-fast serve lint browser clean

# One line says what the first set-up is doing (it takes minutes, silent otherwise); pip's
# own output goes to $(VENV)/install.log, shown only when the install fails.
$(STAMP): pyproject.toml
	@echo "ermviz: installing ermviz and its dependencies into $(VENV) (first run only, a few minutes; log: $(VENV)/install.log)"
	@python3 -m venv $(VENV)
	@{ $(PY) -m pip install --quiet --upgrade pip && \
	   $(PY) -m pip install --quiet -e '.[test]'; } > $(VENV)/install.log 2>&1 || \
	   { tail -n 30 $(VENV)/install.log; echo "ermviz: the install failed (full log: $(VENV)/install.log)"; exit 1; }
	@touch $(STAMP)
	@echo "ermviz: installed"

# Browser tests drive Debian's chromium (no browser downloads are possible here).
browser:
	@if ! command -v chromium >/dev/null 2>&1; then \
		if [ "$$(id -u)" = "0" ]; then \
			apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; \
		else \
			echo "note: chromium is not installed and this is not root; browser tests will be skipped"; \
		fi; \
	fi

lint: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

test: $(STAMP) browser lint
	$(VENV)/bin/pytest

# The fast tier (a contributor's loop, under 5 minutes on 2 cores): no browser, no Jupyter,
# no benchmark smoke runs, no checks on catalog-sized data (tests/conftest.py, "Two tiers").
test-fast: $(STAMP) lint
	$(VENV)/bin/pytest -m "not slow" --durations=10

# `ermviz serve` runs `panel serve` on the packaged app (same as app.py) with
# --setup ermviz/app/serving/warmup.py --check-unused-sessions 1000 --unused-session-lifetime 5000
# --show, and sets SERVE_ENV's allocator settings itself where unset (ermviz/serve.py);
# with PROCS > 1 through ermviz.workers (--num-procs N --reuse-sessions), with PASSWORD=yes
# behind a login page (--auth-module ermviz/app/serving/login.py).
serve: $(STAMP)
	$(SERVE_ENV) $(VENV)/bin/ermviz serve --address $(ADDRESS) --port $(PORT) \
		$(foreach o,$(ORIGINS),--allow-websocket-origin $(o)) $(if $(PROCS),--procs $(PROCS)) \
		$(if $(filter yes,$(PASSWORD)),--password)$(if $(filter no,$(PASSWORD)),--no-password) \
		$(if $(filter yes,$(ADMIN)),--admin-password)

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache test-artifacts
	find . -name __pycache__ -type d -prune -exec rm -rf {} +
