"""``RecordRefType``: the base of the numba types of records that kernels take by
reference.

A run's record of arrays (a domain's block state, a design matrix, a method's run state)
crosses every kernel of a call tree.  As a named tuple, by value, each kernel's signature
carries its arrays as dozens of scalar arguments, which numba compiles slowly in every
function that passes it on (benchmarks/README.md, "First call"); as a numba StructRef it
is one pointer.  A record's type subclasses :class:`RecordRefType` and is registered with
``numba.experimental.structref.register``; its proxy class comes from
``structref.define_proxy`` (see :mod:`frankwolfe.objectives.design_kernels`).
"""

from __future__ import annotations

from typing import Any

from numba import types

__all__ = ["RecordRefType"]


class RecordRefType(types.StructRef):
    """A StructRef type whose fields take the non-literal types of the values it is built
    from (a record made with the integer 3 and one made with 4 are the same type, so
    the kernels compile once for both)."""

    def preprocess_fields(self, fields: Any) -> tuple:
        return tuple((name, types.unliteral(typ)) for name, typ in fields)
