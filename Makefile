# Two entry points for a fresh machine with only python3:
#   make demo   - create .venv, install, run the main demo (no downloads of data)
#   make test   - create .venv, install, run the test suite
#   make test-min - the suite in .venv-min against the lowest declared versions
#                   (ci/constraints-min.txt pins every floor of pyproject.toml)
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
VENV_MIN  := .venv-min
STAMP_MIN := $(VENV_MIN)/.installed

.PHONY: demo test test-min test-all bench clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e ".[test,plot,pandas]"
	touch $(STAMP)

$(STAMP_MIN): pyproject.toml ci/constraints-min.txt
	$(PYTHON) -m venv $(VENV_MIN)
	$(VENV_MIN)/bin/python -m pip install -q --upgrade pip
	$(VENV_MIN)/bin/python -m pip install -q -c ci/constraints-min.txt -e ".[test,plot,pandas]"
	touch $(STAMP_MIN)

demo: $(STAMP)
	$(BIN)/python examples/demo.py

test: $(STAMP)
	$(BIN)/python -m pytest -q

test-min: $(STAMP_MIN)
	$(VENV_MIN)/bin/python -m pytest -q

test-all: $(STAMP)
	$(BIN)/python -m pytest -q -m ""

clean:
	rm -rf $(VENV) $(VENV_MIN) build *.egg-info
