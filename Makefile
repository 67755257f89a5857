# Two entry points for a fresh machine with only python3:
#   make demo   - create .venv, install, run the main demo (no downloads of data)
#   make test   - create .venv, install, run the test suite
#   make docs   - build the documentation site into site/ (strict: any warning fails)
#   make docs-serve - serve the site at http://127.0.0.1:8000 while editing
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
DOCS_STAMP := $(VENV)/.installed-docs
export NO_MKDOCS_2_WARNING := 1

.PHONY: demo test test-all bench clean docs docs-serve

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e ".[test,plot]"
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/python examples/demo.py

test: $(STAMP)
	$(BIN)/python -m pytest -q

test-all: $(STAMP)
	$(BIN)/python -m pytest -q -m ""

$(DOCS_STAMP): $(STAMP) pyproject.toml
	$(BIN)/python -m pip install -q -e ".[docs]"
	touch $(DOCS_STAMP)

# runs every script in examples/ (long ones with --quick) for the gallery
docs: $(DOCS_STAMP)
	$(BIN)/mkdocs build --strict

docs-serve: $(DOCS_STAMP)
	$(BIN)/mkdocs serve

clean:
	rm -rf $(VENV) build site *.egg-info
