# The two commands a user needs: `make run` and `make test`.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-$(shell cat pyproject.toml | cksum | cut -d' ' -f1)

.PHONY: run test lint typecheck unit browser bench clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip

$(STAMP): $(BIN)/python pyproject.toml
	$(BIN)/python -m pip install -q -e '.[ann,server,mcp,postgres,openai-agents,pydantic-ai,report,dev]'
	rm -f $(VENV)/.installed-*; touch $@

# The service on the embedded default (learnloop.db here, the bundled embedder); prints its URL, and an admin
# API key on the first run.
run: $(STAMP)
	$(BIN)/learnloop serve

test: $(STAMP) lint typecheck unit

lint: $(STAMP)
	$(BIN)/ruff check src tests bench examples
	$(BIN)/ruff format --check src tests bench examples

typecheck: $(STAMP)
	$(BIN)/mypy

unit: $(STAMP) browser
	$(BIN)/python -m pytest -q

# Debian's chromium for the browser tests (installed only if missing).
browser:
	sh scripts/ensure-chromium.sh

bench: $(STAMP)
	$(BIN)/python bench/retrieval.py
	$(BIN)/python bench/locomo_recall.py

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
