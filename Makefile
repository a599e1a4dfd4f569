# Two commands do all the set-up: `make demo` and `make test`.  `make help` lists every target.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
TEST_STAMP := $(VENV)/.installed-test

.PHONY: help demo test install clean bench demo-deps system-deps test-tools package

help: ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(firstword $(MAKEFILE_LIST)) | sed -E 's/:.*## /\t/' | expand -t 14

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet --prefer-binary -e .
	touch $(STAMP)

$(TEST_STAMP): $(STAMP)
	$(PY) -m pip install --quiet --prefer-binary -e '.[test]'
	touch $(TEST_STAMP)

install: $(STAMP) ## Belay in .venv, editable (`source .venv/bin/activate` puts `belay` on PATH); no test tools

demo: $(STAMP) demo-deps ## open the window on a scripted agent working on a fresh demo workspace
	$(VENV)/bin/belay demo $(DEMO_ARGS)

# What the demo needs from the system: bubblewrap, the sandbox its Bash commands run in (without it they run
# unsandboxed and the window says so).  Installed only by root with apt-get, and said first.
demo-deps:
	@if ! command -v bwrap >/dev/null 2>&1; then \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    echo "make demo: installing bubblewrap (the sandbox the demo's commands run in) with apt-get"; \
	    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq bubblewrap >/dev/null) \
	      || echo "warning: could not install bubblewrap; the demo's commands run unsandboxed"; \
	  else echo "note: install bubblewrap (Debian/Ubuntu: apt install bubblewrap) to sandbox the demo's commands"; fi; \
	fi

# The attention tests: a notification server (dunst) on a private D-Bus under Xvfb, and an XEmbed tray
# (wmdocker) with the libraries Qt's xcb platform loads, for the tray icon's test.
XCB_LIBS := libxcb-cursor0 libxkbcommon-x11-0 libxcb-icccm4 libxcb-image0 libxcb-keysyms1 libxcb-render-util0 \
  libxcb-shape0 libxcb-randr0 libxcb-xinerama0 libxcb-xkb1

# The test suite's Debian packages (only `make test` installs them), in one apt-get run when we can (root with
# apt-get), said first; Belay runs without each, and the tests that need one say so and skip:
# - bubblewrap gives Bash calls a real sandbox (PID namespace, read-only root); without it Bash runs unsandboxed;
# - desktop-file-utils and appstream validate packaging/;
# - openssh-server and -client: the remote-host test runs a private sshd on 127.0.0.1 (belay serve over ssh);
# - xvfb, dbus, dunst, wmdocker and the xcb libraries run the desktop notification and tray tests;
# - openbox and x11-utils (xprop): the first window's geometry under a real window manager.
system-deps:
	@missing=""; \
	command -v bwrap >/dev/null 2>&1 || missing="$$missing bubblewrap"; \
	command -v desktop-file-validate >/dev/null 2>&1 || missing="$$missing desktop-file-utils"; \
	command -v appstreamcli >/dev/null 2>&1 || missing="$$missing appstream"; \
	{ test -x /usr/sbin/sshd && command -v ssh; } >/dev/null 2>&1 || missing="$$missing openssh-server openssh-client"; \
	{ command -v Xvfb && command -v dbus-daemon && command -v dunst && command -v wmdocker; } >/dev/null 2>&1 \
	  || missing="$$missing xvfb dbus dunst wmdocker $(XCB_LIBS)"; \
	{ command -v openbox && command -v xprop; } >/dev/null 2>&1 || missing="$$missing openbox x11-utils"; \
	if [ -n "$$missing" ]; then \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    echo "make test: installing$$missing with apt-get"; \
	    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null) \
	      || echo "warning: could not install$$missing; Bash may run unsandboxed and the tests needing them skip"; \
	  else echo "note: install$$missing (Debian/Ubuntu) for a sandboxed Bash tool and the desktop and packaging tests"; fi; \
	fi

# The rules a tool checks (pyproject.toml: mypy's types, ruff's lint rules, import-linter's contracts), then the
# tests, two at a time (pytest-xdist: each test has its own state, config and ports; TEST_WORKERS=0 runs them one
# by one).
TEST_WORKERS ?= 2
test: $(TEST_STAMP) system-deps test-tools ## the type checker, the linters and every test, offscreen, two at a time
	$(VENV)/bin/mypy
	$(VENV)/bin/ruff check .
	$(VENV)/bin/lint-imports
	QT_QPA_PLATFORM=offscreen $(PY) -m pytest -n $(TEST_WORKERS) $(PYTEST_ARGS)

# The real agent CLIs (Codex, Gemini CLI) and the MCP conformance suite the integration tests drive,
# at the versions test-tools/package-lock.json pins.  Without npm the tests that need them say so and skip.
TOOLS_STAMP := test-tools/node_modules/.installed
test-tools: ## the real agent CLIs and the MCP conformance suite the integration tests drive (npm)
	@if command -v npm >/dev/null 2>&1; then $(MAKE) --no-print-directory $(TOOLS_STAMP); \
	else echo "note: npm not found; the Codex CLI, Gemini CLI and MCP conformance tests will skip"; fi

$(TOOLS_STAMP): test-tools/package.json test-tools/package-lock.json
	cd test-tools && npm ci --no-audit --no-fund --loglevel=error
	touch $(TOOLS_STAMP)

# A one-folder bundle (dist/belay/belay) that runs without Python installed; PyInstaller comes from PyPI.
# Takes minutes, so `make test` does not build it; packaging/test_bundle.py checks what was built.  The Claude
# Code CLI that the Agent SDK wheel carries (about 400 MB) is left out: `belay claude` then runs the `claude` on
# your PATH.  `make package BUNDLE_CLAUDE=1` keeps it in.
BUNDLE_CLAUDE ?= 0
package: $(STAMP) ## a one-folder bundle in dist/belay that runs without Python
	$(PY) -m pip install --quiet --prefer-binary 'pyinstaller>=6.10,<7'
	$(VENV)/bin/pyinstaller --noconfirm --clean --onedir --name belay --log-level WARN \
	  --distpath dist --workpath build/pyinstaller --specpath build/pyinstaller --paths "$(CURDIR)" \
	  --add-data "$(CURDIR)/resources:resources" --add-data "$(CURDIR)/packaging:packaging" \
	  --add-data "$(CURDIR)/core/outside/hook_client.py:core/outside" \
	  --collect-data claude_agent_sdk --collect-data tree_sitter_bash --copy-metadata belay-console \
	  packaging/launcher.py
	cp $(VENV)/bin/rg dist/belay/rg  # the Grep tool looks for rg beside the program (core.tools.grep.find_rg)
	-strip dist/belay/rg  # the wheel's ripgrep carries its symbols: 26 MB, 5 MB without
	@if [ "$(BUNDLE_CLAUDE)" != 1 ]; then rm -rf dist/belay/_internal/claude_agent_sdk/_bundled; fi
	@echo "Bundle: dist/belay/belay ($$(du -sh dist/belay | cut -f1))"
	QT_QPA_PLATFORM=offscreen $(PY) -m pytest -q -p no:cacheprovider packaging/test_bundle.py

bench: $(TEST_STAMP) ## every benchmark in bench/ (each under two minutes), its figures written into docs/benchmarks.md
	$(PY) bench/report.py

clean: ## remove .venv, build output and the npm test tools
	rm -rf $(VENV) build dist *.egg-info test-tools/node_modules
