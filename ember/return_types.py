"""Named result tuples of ops returning several tensors (``torch.return_types.max`` and friends)."""
from __future__ import annotations

__all__ = ["max", "min", "sort", "topk", "kthvalue", "median", "cummax", "cummin"]
__all__ += ["frexp", "aminmax", "mode", "nanmedian", "histogram", "lu_unpack", "triangular_solve", "qr"]
__all__ += ["linalg_cholesky_ex"]


class _ReturnType(tuple):
    """A tuple whose fields also have names; printed as torch prints its structseqs."""

    __slots__ = ()
    _fields: tuple = ()

    def __new__(cls, *values):
        if len(values) != len(cls._fields):
            raise TypeError(f"torch.return_types.{cls.__name__} takes a {len(cls._fields)}-sequence")
        return tuple.__new__(cls, values)

    def __repr__(self) -> str:
        body = ",\n".join(f"{n}={v!r}" for n, v in zip(self._fields, self))
        return f"torch.return_types.{type(self).__name__}(\n{body})"

    def __reduce__(self):
        return (type(self), tuple(self))


def _make(name: str, fields: tuple = ("values", "indices")) -> type:
    ns = {"__slots__": (), "_fields": fields, "__module__": __name__}
    for i, f in enumerate(fields):
        ns[f] = property(lambda self, i=i: tuple.__getitem__(self, i))
    return type(name, (_ReturnType,), ns)


max = _make("max")  # noqa: A001 - torch's names
min = _make("min")  # noqa: A001
sort = _make("sort")
topk = _make("topk")
kthvalue = _make("kthvalue")
median = _make("median")
cummax = _make("cummax")
cummin = _make("cummin")

# ---- linear algebra (ops/decompositions.py) ----
slogdet = _make("slogdet", ("sign", "logabsdet"))
linalg_slogdet = _make("linalg_slogdet", ("sign", "logabsdet"))
linalg_qr = _make("linalg_qr", ("Q", "R"))
linalg_eigh = _make("linalg_eigh", ("eigenvalues", "eigenvectors"))
linalg_eig = _make("linalg_eig", ("eigenvalues", "eigenvectors"))
linalg_svd = _make("linalg_svd", ("U", "S", "Vh"))
svd = _make("svd", ("U", "S", "V"))
geqrf = _make("geqrf", ("a", "tau"))
__all__ += ["slogdet", "linalg_slogdet", "linalg_qr", "linalg_eigh", "linalg_eig", "linalg_svd", "svd", "geqrf"]

frexp = _make("frexp", ("mantissa", "exponent"))
aminmax = _make("aminmax", ("min", "max"))
mode = _make("mode")
nanmedian = _make("nanmedian")
histogram = _make("histogram", ("hist", "bin_edges"))
lu_unpack = _make("lu_unpack", ("P", "L", "U"))
triangular_solve = _make("triangular_solve", ("solution", "cloned_coefficient"))
qr = _make("qr", ("Q", "R"))
linalg_cholesky_ex = _make("linalg_cholesky_ex", ("L", "info"))
