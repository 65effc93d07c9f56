# Set-up is in here: a fresh machine needs only Python and pip.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
PIP := $(VENV)/bin/pip
STAMP := $(VENV)/.installed-$(shell cat pyproject.toml | cksum | cut -d' ' -f1)

.PHONY: test demo bench lint clean

$(PY):
	$(PYTHON) -m venv $(VENV)

$(STAMP): pyproject.toml | $(PY)
	$(PIP) install -q --upgrade pip
	$(PIP) install -q -e '.[test,lint]'
	touch $(STAMP)

test: $(STAMP)
	$(PY) -m pytest -q -n 2 tests

demo: $(STAMP)
	$(PY) -m ember.demo

bench: $(STAMP)
	$(PY) bench/run.py

lint: $(STAMP)
	$(VENV)/bin/ruff check ember tests bench

clean:
	rm -rf $(VENV) build *.egg-info
