"""The rows of the elementwise op tables: named records, and the public names a row declares.

# NOTE [one row per op]
An elementwise op is one row of a table in its module (``_UNARY`` / ``_BINARY`` / ``_TERNARY`` / ``_PREDICATES`` in
ops/elementwise.py, ``_COMPARISONS`` in ops/comparison.py ...): a record whose fields name what the op is (its node,
forward kernel, backward formula, what it saves) and which public names it has. ``export`` at the end of the module
reads the tables and

  - defines the public function of each row made from it (``function="made"``; ``"written"``: the module writes
    it by hand below the table, for extra arguments such as ``round(decimals=)``; ``""``: no public function),
    and its aliases (``torch.arcsin`` is ``torch.asin``),
  - lists them in the module's ``__all__`` (``ember.ops`` re-exports it: ``torch.exp``),
  - collects the names ember/_methods.py binds as Tensor methods (``method``: ``t.exp()``; ``inplace``:
    ``t.exp_()``) and ember/_aten.py as torch's top-level in-place forms (``torch_inplace``: ``torch.exp_(t)``).

A function written by hand with no row of its own declares its names with a bare ``Names`` record in the module's
``_WRITTEN`` table. The made functions are the same objects as before the tables declared them (no wrapper): the hot
path ``torch.exp(x)`` / ``x.exp()`` costs what it did.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

__all__ = ["Names", "Unary", "Binary", "Ternary", "Predicate", "Comparison", "Exports", "export", "ROW_MODULES"]

# the modules whose tables declare public names (their ``EXPORTS``: read by ember/_methods.py and ember/_aten.py)
ROW_MODULES = ("ember.ops.elementwise", "ember.ops.piecewise", "ember.ops.comparison")


def _kw(default):
    return field(default=default, kw_only=True)


@dataclass(frozen=True)
class Names:
    """The public names of one op (the row's key is its name)."""

    method: bool = _kw(True)            # Tensor.<name>(...)
    inplace: bool = _kw(True)           # Tensor.<name>_(...)
    torch_inplace: bool = _kw(False)    # torch.<name>_(t, ...)
    aliases: tuple = _kw(())            # other names of the same function and methods (torch.arcsin: asin)
    function: str = _kw("made")         # "made" from the row, "written" by hand in the module, "" none


@dataclass(frozen=True)
class Unary(Names):
    """An op of one tensor: ``forward(x, *attrs)`` on arrays, ``backward(grad, *saved, *attrs)`` in ember ops (so
    it is differentiable again; forward-mode AD reuses it: an elementwise Jacobian is diagonal)."""

    node: str                           # the Op class name; torch's node name is <node>Backward0 ...
    forward: Callable
    backward: Callable
    saved: tuple = _kw(("self",))       # what backward reads: ("self",) the input, ("result",), () nothing
    nattrs: int = _kw(0)                # trailing non-tensor arguments (round's decimals)
    torch_node: str = _kw("")           # ... unless torch names the node otherwise


@dataclass(frozen=True)
class Binary(Names):
    """An op of two broadcast tensors (either may be a Python number where ``scalars`` says): ``kernel(a, b)`` on
    arrays promoted as torch; ``backward`` one callable giving both gradients, a pair of callables (one per input,
    called only for an input that needs its gradient) or None (not differentiable)."""

    node: str
    kernel: Callable
    backward: Callable | tuple | None
    dtypes: str = _kw("biuf")           # the dtype kinds the kernel accepts (torch's "not implemented for" otherwise)
    to_float: bool = _kw(False)         # integer inputs compute in the default float dtype
    kernel_name: str = _kw("")          # torch's kernel in its errors (default <name>_cpu)
    saved: tuple = _kw(())
    save_for: dict = _kw(None)          # NOTE [declaring an op]
    torch_node: str = _kw("")
    scalars: str = _kw("")              # which arguments may be Python numbers: "", "other", "both"
    scalar_nodes: tuple = _kw(("", ""))  # torch's node names when other / input is a number (default torch_node)


@dataclass(frozen=True)
class Ternary(Names):
    """An op of three broadcast tensors (then ``attrs``): gradient i is ``backward[i](grad, *saved, *attrs)``."""

    node: str
    kernel: Callable
    backward: tuple
    inputs: tuple = _kw(("self", "other", "third"))
    saved: tuple = _kw(())
    save_for: dict = _kw(None)          # NOTE [declaring an op]
    attrs: tuple = _kw(())
    torch_node: str = _kw("")


@dataclass(frozen=True)
class Predicate(Names):
    """A bool-valued test of one tensor (no gradient): ``kernel(array)``; ``on_complex`` the kernel for complex
    inputs, or the exception torch raises for them."""

    kernel: Callable
    on_complex: object = _kw(None)
    inplace: bool = _kw(False)


@dataclass(frozen=True)
class Comparison(Names):
    """A comparison, logical or bitwise op of two tensors or numbers (no gradient): ``kernel(a, b)`` on arrays."""

    node: str
    kernel: Callable
    integers: bool = _kw(False)         # bitwise: floating and complex operands refused with torch's error


@dataclass(frozen=True)
class Exports:
    """What ``export`` collected: the public names (the module's ``__all__``), the methods, the in-place methods and
    torch's in-place forms."""

    public: list
    methods: tuple
    inplace: tuple
    torch_inplace: tuple


def export(namespace: dict, tables: tuple, make: dict) -> Exports:
    """Define the functions of the rows of ``tables`` (dicts: public name -> row) in the module ``namespace``
    (``make[type(row)](name, row)`` builds one, ``make[type(row)](name, row, alias)`` an alias's) and return the
    public, method and in-place names (NOTE [one row per op])."""
    public, methods, inplace, forms = [], [], [], []
    for table in tables:
        for name, row in table.items():
            made = row.function == "made"
            if made:
                namespace[name] = make[type(row)](name, row)
            elif row.function == "written" and name not in namespace:
                raise RuntimeError(f"{namespace['__name__']}: the row {name!r} says its function is written, but the "
                                   "module defines none")
            if not row.function:
                continue
            names = (name, *row.aliases)
            for alias in row.aliases:  # (a made row's maker decides whether an alias is the same function)
                namespace[alias] = make[type(row)](name, row, alias) if made else namespace[name]
            public += [n for n in names if n not in public]
            if row.method:
                methods += names
            if row.inplace:
                inplace += names
            if row.torch_inplace:
                forms += [n + "_" for n in names]
    return Exports(public, tuple(methods), tuple(inplace), tuple(forms))
