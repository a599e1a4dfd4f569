# Two commands do all the set-up: `make demo` and `make test`.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: demo test install clean bench system-deps

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
test: $(STAMP) system-deps
	$(VENV)/bin/ruff check .
	$(VENV)/bin/lint-imports
	QT_QPA_PLATFORM=offscreen $(PY) -m pytest $(PYTEST_ARGS)

bench: $(STAMP)
	@for b in bench/*.py; do echo "== $$b"; $(PY) $$b || exit 1; done

clean:
	rm -rf $(VENV) build *.egg-info
