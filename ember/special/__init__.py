"""ember.special: the ``torch.special`` namespace (gamma, error, Bessel and related functions)."""
from __future__ import annotations

from .. import _args
from .. import _dtype as D
from .._tensor import Tensor
from ..ops.elementwise import (_UOPS, _out, digamma, erf, erfc, erfinv, exp2, expm1, i0, lgamma as gammaln, log1p,
                               logit, mvlgamma, polygamma, sinc, xlogy)
from ..ops.elementwise import round as _round
from ..ops.elementwise import igamma as gammainc, igammac as gammaincc, sigmoid as expit
from ..ops.reduction import logsumexp
from ..ops.special import entr, erfcx, i0e, i1e, log_ndtr, ndtr, ndtri, xlog1py, zeta
from ..ops.special import (airy_ai, bessel_j0, bessel_j1, bessel_y0, bessel_y1, chebyshev_polynomial_t, chebyshev_polynomial_u, chebyshev_polynomial_v,
                           chebyshev_polynomial_w, hermite_polynomial_h, hermite_polynomial_he, laguerre_polynomial_l,
                           legendre_polynomial_p, modified_bessel_i0, modified_bessel_i1, modified_bessel_k0,
                           modified_bessel_k1, scaled_modified_bessel_k0, scaled_modified_bessel_k1,
                           shifted_chebyshev_polynomial_t, shifted_chebyshev_polynomial_u,
                           shifted_chebyshev_polynomial_v, shifted_chebyshev_polynomial_w, spherical_bessel_j0)
from .._aten import log_softmax as _log_softmax, softmax as _softmax

__all__ = ["digamma", "psi", "erf", "erfc", "erfinv", "exp2", "expm1", "expit", "gammaln", "gammainc", "gammaincc",
           "i0", "i1", "log1p", "logit", "logsumexp", "multigammaln", "polygamma", "round", "sinc", "softmax",
           "log_softmax", "xlogy", "entr", "erfcx", "i0e", "i1e", "log_ndtr", "ndtr", "ndtri", "xlog1py",
           "chebyshev_polynomial_t", "chebyshev_polynomial_u", "chebyshev_polynomial_v", "chebyshev_polynomial_w",
           "hermite_polynomial_h", "hermite_polynomial_he", "laguerre_polynomial_l", "legendre_polynomial_p",
           "modified_bessel_i0", "modified_bessel_i1", "shifted_chebyshev_polynomial_t", "shifted_chebyshev_polynomial_u",
           "shifted_chebyshev_polynomial_v", "shifted_chebyshev_polynomial_w", "spherical_bessel_j0", "zeta",
           "modified_bessel_k0", "modified_bessel_k1", "scaled_modified_bessel_k0", "scaled_modified_bessel_k1",
           "bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1", "airy_ai"]

psi = digamma


def i1(input: Tensor, *, out: Tensor | None = None) -> Tensor:
    """The modified Bessel function of the first kind of order one."""
    return _out(_UOPS["special_i1"].apply(input), out)


def multigammaln(input: Tensor, p: int, *, out: Tensor | None = None) -> Tensor:
    """The multivariate log-gamma function of dimension ``p`` (torch.mvlgamma)."""
    return mvlgamma(input, p, out=out)


def softmax(input: Tensor, dim: int, dtype: D.dtype | None = None) -> Tensor:
    """exp(x) / sum(exp(x)) along ``dim``, computed in ``dtype`` when given."""
    return _softmax(input, dim, dtype)


def log_softmax(input: Tensor, dim: int, *, dtype: D.dtype | None = None) -> Tensor:
    """log(softmax(x)) along ``dim``, computed in ``dtype`` when given."""
    return _log_softmax(input, dim, dtype)


def round(input: Tensor, *, decimals: int = 0, out: Tensor | None = None) -> Tensor:  # noqa: A001
    """Round half to even, to ``decimals`` decimal places."""
    return _round(input, decimals=decimals, out=out)


_args.install(globals(), ("i1", "multigammaln", "softmax", "log_softmax", "round"))
