# Two commands do all the set-up: `make demo` and `make test`.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: demo test install clean bench system-deps test-tools

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet --prefer-binary -e '.[test]'
	touch $(STAMP)

install: $(STAMP)

demo: $(STAMP) system-deps
	$(VENV)/bin/belay demo $(DEMO_ARGS)

# Bubblewrap gives Bash calls a real sandbox (PID namespace, read-only root).
# Installed from Debian when we can (root with apt-get); Belay still runs
# without it, with the sandbox shown as off.
system-deps:
	@command -v bwrap >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq bubblewrap >/dev/null) \
	      || echo "warning: could not install bubblewrap; Bash runs unsandboxed"; \
	  else echo "note: install bubblewrap for a sandboxed Bash tool (Debian/Ubuntu: apt-get install bubblewrap)"; fi; }

# The rules a tool checks (pyproject.toml: ruff's lint rules, import-linter's contracts), then the tests.
test: $(STAMP) system-deps test-tools
	$(VENV)/bin/ruff check .
	$(VENV)/bin/lint-imports
	QT_QPA_PLATFORM=offscreen $(PY) -m pytest $(PYTEST_ARGS)

# The real agent CLIs (Codex, Gemini CLI) and the MCP conformance suite the integration tests drive,
# at the versions test-tools/package-lock.json pins.  Without npm the tests that need them say so and skip.
TOOLS_STAMP := test-tools/node_modules/.installed
test-tools:
	@if command -v npm >/dev/null 2>&1; then $(MAKE) --no-print-directory $(TOOLS_STAMP); \
	else echo "note: npm not found; the Codex CLI, Gemini CLI and MCP conformance tests will skip"; fi

$(TOOLS_STAMP): test-tools/package.json test-tools/package-lock.json
	cd test-tools && npm ci --no-audit --no-fund --loglevel=error
	touch $(TOOLS_STAMP)

bench: $(STAMP)
	@for b in bench/*.py; do echo "== $$b"; $(PY) $$b || exit 1; done

clean:
	rm -rf $(VENV) build *.egg-info test-tools/node_modules
