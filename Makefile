# Two entry points for a fresh machine with only python3:
#   make demo   - create .venv, install, run the main demo (no downloads of data)
#   make test   - create .venv, install, run the test suite
#   make docs   - build the documentation site into site/ (strict: any warning fails)
#   make docs-serve - serve the site at http://127.0.0.1:8000 while editing
#   make test-min - the suite in .venv-min against the lowest declared versions
#                   (ci/constraints-min.txt pins every floor of pyproject.toml)
#   make test-floors - the part of test-min that CI runs (see FLOORS below)
#   make lint - ruff on the whole tree; mypy and the import contracts (lint-imports) on
#               frankwolfe/ and applications/; with the tools of the `lint` extra
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
DOCS_STAMP := $(VENV)/.installed-docs
LINT_STAMP := $(VENV)/.installed-lint
VENV_MIN  := .venv-min
STAMP_MIN := $(VENV_MIN)/.installed
export NO_MKDOCS_2_WARNING := 1
# pip installs without byte-compiling (--no-compile, below): Python then writes the .pyc
# of what is imported.  Where PYTHONDONTWRITEBYTECODE is set (some containers and CI
# images) it never does, and every process of the suite (pytest's workers, the scenario,
# Dask worker and example processes) compiled numba, scipy, scikit-learn and dask from
# source again: 4-5 CPU-s a process (benchmarks/README.md, "Test suite and CI time").
# The targets here only write into this checkout and its environments.
unexport PYTHONDONTWRITEBYTECODE
# The gallery's examples (make docs) and the benchmarks read their data from
# FRANKWOLFE_DATA; in a checkout beside the project's shared data folder (as in CI) that
# folder is used unless the variable is set (the tests do the same in tests/conftest.py).
SHARED_DATA := $(wildcard $(CURDIR)/../shared/data)
ifneq ($(SHARED_DATA),)
export FRANKWOLFE_DATA ?= $(SHARED_DATA)
endif

.PHONY: demo test test-min test-floors test-all bench clean docs docs-serve lint

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q --no-compile -e ".[test,plot,pandas]"
	touch $(STAMP)

$(STAMP_MIN): pyproject.toml ci/constraints-min.txt
	$(PYTHON) -m venv $(VENV_MIN)
	$(VENV_MIN)/bin/python -m pip install -q --upgrade pip
	$(VENV_MIN)/bin/python -m pip install -q --no-compile -c ci/constraints-min.txt -e ".[test,plot,pandas]"
	touch $(STAMP_MIN)

demo: $(STAMP)
	$(BIN)/python examples/demo.py

# -n auto: one pytest worker per core (pytest-xdist; worksteal balances the long tests);
# the suite is mostly numba compiling kernels, one core each
XDIST := -n auto --dist worksteal

test: $(STAMP)
	$(BIN)/python -m pytest -q $(XDIST)

# numba's cache of another version lives apart: the two suites may run side by side.
# NUMBA_OPT=0: on a fresh clone (CI) this suite is mostly LLVM optimizing the kernels
# that old numba compiles cold, and the floors are about behaviour, not speed (the
# kernels are not fastmath-dependent beyond rounding, which the tests' tolerances take);
# the cache then holds unoptimized code, so it stays in .venv-min, away from benchmarks.
# At O0 numba declines to cache some functions ("dynamic globals" NumbaWarnings): a warm
# rerun compiles those again, cheaply.
test-min: $(STAMP_MIN)
	NUMBA_OPT=0 NUMBA_CACHE_DIR=$(CURDIR)/$(VENV_MIN)/numba-cache $(VENV_MIN)/bin/python -m pytest -q $(XDIST)

# The floors in CI: a smoke run of each dependency's API at the lowest versions declared
# and at -O0 (numpy and scipy through the core, its LMOs and the known optima, and
# scipy's HiGHS on an LP of 48,000 variables, which scipy 1.15.0 took half an hour over;
# scikit-learn's estimator checks and searches; cvxpy; networkx and pandas through the
# traffic skims; numba compiling the core's, the chain model's, the lasso's and the
# traffic kernels); an entry `file::test` runs one test of a file.  At the floors most of
# a test's time is old numba compiling at -O0, so each kernel family is compiled once
# here, by the test that reaches the most API around it.  CI's 2 cores fit neither the
# whole of test-min nor a larger part of it beside make test and the docs within its
# 10 minutes; run `make test-min` before a release, after raising a floor or touching
# the numba hooks.
FLOORS := test_min_versions test_imports test_packaging test_readme test_bad_input \
	test_core_loop test_engine test_result test_lmo_vector test_lmo_flow test_known_optima \
	test_bcfw test_estimators_sklearn \
	test_lasso::test_diabetes_agrees_with_sklearn \
	test_lasso::test_compiled_path_warm_starts_and_matches_pairwise \
	test_lasso::test_estimator_matches_sklearn_with_intercept \
	test_traffic_multiclass::test_skims_against_networkx_paths \
	test_traffic_multiclass::test_select_link_flows_add_up_to_link_flows \
	test_traffic_multiclass::test_outputs_name_missing_pandas_and_class_mismatch \
	test_multilabel::test_mutual_information_against_sklearn \
	test_multilabel::test_chow_liu_tree_is_a_maximum_spanning_tree \
	test_graph_lp_pruned::test_a_large_grid_prunes_to_the_same_optimum
FLOOR_TESTS := $(foreach f,$(FLOORS),tests/$(if $(findstring ::,$(f)),$(subst ::,.py::,$(f)),$(f).py))
test-floors: $(STAMP_MIN)
	NUMBA_OPT=0 NUMBA_CACHE_DIR=$(CURDIR)/$(VENV_MIN)/numba-cache $(VENV_MIN)/bin/python -m pytest -q $(XDIST) \
		$(FLOOR_TESTS)

test-all: $(STAMP)
	$(BIN)/python -m pytest -q -m "" $(XDIST)

$(LINT_STAMP): $(STAMP) pyproject.toml
	$(BIN)/python -m pip install -q --no-compile -e ".[lint]"
	touch $(LINT_STAMP)

# Each tool reads its configuration from pyproject.toml.  mypy keeps its cache in
# .mypy_cache (a warm run takes seconds); lint-imports runs from the repository root,
# where `applications` is importable as the folder it is (see [tool.importlinter]).
# All three run (one report for everything), and the target fails if any found something.
lint: $(LINT_STAMP)
	@status=0; \
	$(BIN)/ruff check . || status=1; \
	$(BIN)/mypy || status=1; \
	$(BIN)/lint-imports || status=1; \
	exit $$status

$(DOCS_STAMP): $(STAMP) pyproject.toml
	$(BIN)/python -m pip install -q --no-compile -e ".[docs]"
	touch $(DOCS_STAMP)

# runs every script in examples/ (long ones with --quick) for the gallery
docs: $(DOCS_STAMP)
	$(BIN)/mkdocs build --strict

docs-serve: $(DOCS_STAMP)
	$(BIN)/mkdocs serve

clean:
	rm -rf $(VENV) $(VENV_MIN) build site *.egg-info
