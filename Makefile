# Set-up is in here: a fresh machine needs only Python and pip.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
PIP := $(VENV)/bin/pip
STAMP := $(VENV)/.installed-$(shell cat pyproject.toml | cksum | cut -d' ' -f1)
BENCH_STAMP := $(VENV)/.bench-$(shell cat pyproject.toml | cksum | cut -d' ' -f1)

.PHONY: test demo bench lint clean viz compat ecosystem stub gpu-check

$(PY):
	$(PYTHON) -m venv $(VENV)

$(STAMP): pyproject.toml | $(PY)
	$(PIP) install -q --upgrade pip
	$(PIP) install -q -e '.[test,lint]'
	touch $(STAMP)

test: $(STAMP)
	-@$(MAKE) --no-print-directory viz  # the rendered-SVG test needs Graphviz's dot
	$(PY) -m pytest -q -n 2 tests

DEMO_STAMP := $(VENV)/.demo-installed-$(shell cat pyproject.toml | cksum | cut -d' ' -f1)

$(DEMO_STAMP): pyproject.toml | $(PY)
	$(PIP) install -q --upgrade pip
	$(PIP) install -q -e '.[demo,viz]'
	touch $(DEMO_STAMP)

demo: $(DEMO_STAMP)
	-@$(MAKE) --no-print-directory viz  # optional: without Graphviz the demo writes the graph as DOT text
	$(PY) -m ember.demo $(DEMO_ARGS)

viz:  # Graphviz's dot program, for rendering graph pictures (apt-get: needs root)
	@command -v dot >/dev/null || (apt-get update -qq && apt-get install -y -qq graphviz >/dev/null) \
		|| echo "Graphviz's dot could not be installed; graph pictures stay DOT text"

# The peers (HIPS autograd, mygrad) and threadpoolctl (which BLAS NumPy runs) come from the bench and peers
# extras, not from `make test`.
$(BENCH_STAMP): $(STAMP)
	$(PIP) install -q -e '.[bench,peers]'
	touch $(BENCH_STAMP)

bench: $(BENCH_STAMP)
	$(PY) bench/run.py $(BENCH_ARGS)

# Third-party libraries' own test suites on torch and with ember as `torch` (venvs in .ecosystem/, not part of
# `make test`); writes ECOSYSTEM.md. ECO_LIBS=einops,torchsde picks libraries (ecosystem/libraries.py).
ECO_LIBS ?=
ecosystem:
	$(PYTHON) -m ecosystem.run $(if $(ECO_LIBS),--libs $(ECO_LIBS)) $(ECO_ARGS)

# On a machine with CuPy and a CUDA torch (no install: ember runs from the checkout): op_db on cuda against torch's
# CUDA, the demo's network trained on the GPU, bench W2/W3/W5/W6 against torch CUDA eager; summary in $$OUT (or
# gpu_check_out/). GPU_ARGS=--dry-run checks the script itself on the NumPy stand-in device (tools/gpu_check.py).
gpu-check:
	PYTHONUNBUFFERED=1 PYTHONPATH=. $(PYTHON) tools/gpu_check.py $(GPU_ARGS)

compat: $(STAMP)  # regenerate docs/compat.md (every torch name: supported / partial / not supported)
	$(PY) tools/compat.py

stub: $(STAMP)  # regenerate ember/_tensor.pyi (every Tensor method's signature, for editors)
	$(PY) tools/tensor_stub.py

lint: $(STAMP)
	$(VENV)/bin/ruff check ember tests bench tools ecosystem

clean:
	rm -rf $(VENV) build *.egg-info .ecosystem
