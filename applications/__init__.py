"""Applications built on the frankwolfe core (they import frankwolfe, never the reverse).

Installed as ``frankwolfe.applications``, the one name they may be imported under: a
second name (the checkout's top-level ``applications``, from the repository root) would
make two copies of every module, and numba's cache and the generated block drivers would
record kernels under both.
"""

if __name__ != "frankwolfe.applications":
    raise ImportError(
        f"the applications are imported as `frankwolfe.applications`, not as {__name__!r}: "
        f"use `import frankwolfe.applications` (or `from frankwolfe.applications.lasso "
        f"import ...`); the folder {__path__[0]!r} is the package's source, not a "
        f"package of its own",
        name=__name__,
    )

from frankwolfe._warnings import skip_folder

# warnings raised here point at the user's line, past the applications' frames too
skip_folder(__file__)
