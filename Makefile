# Two commands set everything up on a fresh Debian 12 with Python 3.11:
#   make render   venv + install + render the bundled example into build/
#   make test     + test dependencies (Debian packages included) + the whole suite
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
EXAMPLE ?= inventories/pod-roce-400g
DEBIAN_PACKAGES := opensm ibsim-utils infiniband-diags openssh-server frr lldpd iputils-ping
LINT_PATHS := fabricgen tests $(wildcard benchmarks/*.py)
CHECK_TESTS := fabricgen tests/test_plan_passes.py tests/test_function_length.py tests/test_layers.py tests/test_artifacts_media.py tests/test_yamlemit.py tests/test_templating.py \
	tests/test_render_golden.py tests/test_artifacts_golden.py tests/test_ib_partitions.py
TEST_WORKERS ?= 4
# `make test` runs the suite on TEST_WORKERS pytest-xdist workers, one test file per worker at a time
# (a module's lab is booted once), the longest files first (tests/conftest.py FIRST). 4 on 2 cores:
# most of a lab or playbook test is waiting (FRR timers, Ansible), which the other workers fill.
# `make check`: the fast loop (lint, types, repeated code, doctests and the unit tests that need no Debian package
# and start no subprocess; under a minute). `make test` runs everything and is what CI calls.

.PHONY: render check test lint typecheck duplicates debian-packages goldens benchmark clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip

$(VENV)/.installed: pyproject.toml | $(BIN)/python
	$(BIN)/pip install --quiet -e .
	touch $@

$(VENV)/.installed-test: pyproject.toml | $(BIN)/python
	$(BIN)/pip install --quiet -e '.[test,deploy]'
	touch $(VENV)/.installed $@

render: $(VENV)/.installed
	$(BIN)/fabricgen render $(EXAMPLE)

debian-packages:
	@missing=""; for p in $(DEBIAN_PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  echo "installing Debian packages:$$missing"; \
	  if [ "$$(id -u)" = 0 ]; then SUDO=""; else SUDO="sudo"; fi; \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq $$missing >/dev/null; \
	fi

lint: $(VENV)/.installed-test
	$(BIN)/ruff format --check $(LINT_PATHS)
	$(BIN)/ruff check $(LINT_PATHS)

typecheck: $(VENV)/.installed-test
	$(BIN)/mypy

# pylint's duplicate-code only (settings in pyproject.toml): no block of 6+ lines twice.
duplicates: $(VENV)/.installed-test
	$(BIN)/pylint fabricgen tests

check: $(VENV)/.installed-test lint typecheck duplicates
	$(BIN)/python -m pytest -q $(CHECK_TESTS)

test: $(VENV)/.installed-test debian-packages lint typecheck duplicates
	$(BIN)/python -m pytest -q -n $(TEST_WORKERS) --dist loadfile --no-loadscope-reorder

goldens: $(VENV)/.installed-test
	$(BIN)/python -m pytest -q --update-goldens tests

benchmark: $(VENV)/.installed
	$(BIN)/python benchmarks/bench.py

clean:
	rm -rf build .pytest_cache .mypy_cache .ruff_cache
