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

from typing import Callable

__all__ = ["Names", "Unary", "Binary", "Ternary", "Predicate", "Comparison", "Exports", "export", "ROW_MODULES"]

# the modules whose tables declare public names (their ``EXPORTS``: read by ember/_methods.py and ember/_aten.py)
ROW_MODULES = ("ember.ops.elementwise", "ember.ops.piecewise", "ember.ops.comparison")


# (plain classes with __slots__, not dataclasses: making a dataclass costs milliseconds at import)
class Names:
    """The public names of one op (the row's key is its name): Tensor.<name>(...) (``method``), Tensor.<name>_(...)
    (``inplace``), torch.<name>_(t, ...) (``torch_inplace``), other names of the same function and methods
    (``aliases``: torch.arcsin is asin), and whether the function is ``"made"`` from the row, ``"written"`` by hand in
    the module, or ``""`` not public."""

    __slots__ = ("method", "inplace", "torch_inplace", "aliases", "function")

    def __init__(self, *, method: bool = True, inplace: bool = True, torch_inplace: bool = False, aliases: tuple = (),
                 function: str = "made"):
        self.method, self.inplace, self.torch_inplace = method, inplace, torch_inplace
        self.aliases, self.function = aliases, function

    def __repr__(self) -> str:
        fields = [n for c in reversed(type(self).__mro__) for n in getattr(c, "__slots__", ())]
        return f"{type(self).__name__}({', '.join(f'{n}={getattr(self, n)!r}' for n in fields)})"


class Unary(Names):
    """An op of one tensor: ``forward(x, *attrs)`` on arrays, ``backward(grad, *saved, *attrs)`` in ember ops (so
    it is differentiable again; forward-mode AD reuses it: an elementwise Jacobian is diagonal). ``node`` is the Op
    class name (torch's node name is <node>Backward0 unless ``torch_node``); ``saved`` what backward reads:
    ("self",) the input, ("result",), () nothing; ``nattrs`` trailing non-tensor arguments (round's decimals)."""

    __slots__ = ("node", "forward", "backward", "saved", "nattrs", "torch_node")

    def __init__(self, node: str, forward: Callable, backward: Callable, *, saved: tuple = ("self",), nattrs: int = 0,
                 torch_node: str = "", **names):
        super().__init__(**names)
        self.node, self.forward, self.backward = node, forward, backward
        self.saved, self.nattrs, self.torch_node = saved, nattrs, torch_node


class Binary(Names):
    """An op of two broadcast tensors (either may be a Python number where ``scalars`` says: "", "other", "both"):
    ``kernel(a, b)`` on arrays promoted as torch; ``backward`` one callable giving both gradients, a pair of
    callables (one per input, called only for an input that needs its gradient) or None (not differentiable).
    ``dtypes``: the dtype kinds the kernel accepts (torch's "not implemented for" otherwise); ``to_float``: integer
    inputs compute in the default float dtype; ``kernel_name``: torch's kernel in its errors (default <name>_cpu);
    ``save_for``: NOTE [declaring an op]; ``scalar_nodes``: torch's node names when other / input is a number."""

    __slots__ = ("node", "kernel", "backward", "dtypes", "to_float", "kernel_name", "saved", "save_for", "torch_node",
                 "scalars", "scalar_nodes")

    def __init__(self, node: str, kernel: Callable, backward, *, dtypes: str = "biuf", to_float: bool = False,
                 kernel_name: str = "", saved: tuple = (), save_for: dict | None = None, torch_node: str = "",
                 scalars: str = "", scalar_nodes: tuple = ("", ""), **names):
        super().__init__(**names)
        self.node, self.kernel, self.backward = node, kernel, backward
        self.dtypes, self.to_float, self.kernel_name = dtypes, to_float, kernel_name
        self.saved, self.save_for, self.torch_node = saved, save_for, torch_node
        self.scalars, self.scalar_nodes = scalars, scalar_nodes


class Ternary(Names):
    """An op of three broadcast tensors named ``inputs`` (then the attributes named ``attrs``): gradient i is
    ``backward[i](grad, *saved, *attrs)``."""

    __slots__ = ("node", "kernel", "backward", "inputs", "saved", "save_for", "attrs", "torch_node")

    def __init__(self, node: str, kernel: Callable, backward: tuple, *, inputs: tuple = ("self", "other", "third"),
                 saved: tuple = (), save_for: dict | None = None, attrs: tuple = (), torch_node: str = "", **names):
        super().__init__(**names)
        self.node, self.kernel, self.backward, self.inputs = node, kernel, backward, inputs
        self.saved, self.save_for, self.attrs, self.torch_node = saved, save_for, attrs, torch_node


class Predicate(Names):
    """A bool-valued test of one tensor (no gradient, no in-place form): ``kernel(array)``; ``on_complex`` the
    kernel for complex inputs, or the exception torch raises for them."""

    __slots__ = ("kernel", "on_complex")

    def __init__(self, kernel: Callable, *, on_complex=None, inplace: bool = False, **names):
        super().__init__(inplace=inplace, **names)
        self.kernel, self.on_complex = kernel, on_complex


class Comparison(Names):
    """A comparison, logical or bitwise op of two tensors or numbers (no gradient): ``kernel(a, b)`` on arrays;
    ``integers``: bitwise, floating and complex operands refused with torch's error."""

    __slots__ = ("node", "kernel", "integers")

    def __init__(self, node: str, kernel: Callable, *, integers: bool = False, **names):
        super().__init__(**names)
        self.node, self.kernel, self.integers = node, kernel, integers


class Exports:
    """What ``export`` collected: the public names (the module's ``__all__``), the methods, the in-place methods and
    torch's in-place forms."""

    __slots__ = ("public", "methods", "inplace", "torch_inplace")

    def __init__(self, public: list, methods: tuple, inplace: tuple, torch_inplace: tuple):
        self.public, self.methods, self.inplace, self.torch_inplace = public, methods, inplace, torch_inplace


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
