"""L-BFGS (limited-memory quasi-Newton) with an optional strong-Wolfe line search, as torch.optim.LBFGS.

The whole parameter set is treated as one flat vector. Arithmetic runs on NumPy arrays and NumPy scalars of
the parameters' dtype, so the scalar promotions match torch's 0-d tensors (NEP 50 ~ torch's weak Python
scalars). The state lives under the first parameter, as torch keeps it, with tensors where torch has tensors
(so it round-trips through ``state_dict``/``torch.save`` to torch).
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from .. import _factories as _F
from .._tensor import Tensor
from ..autograd.grad_mode import enable_grad, no_grad
from .optimizer import Optimizer, _to_array

__all__ = ["LBFGS"]


def _cubic_min(x1, f1, g1, x2, f2, g2, bounds=None):
    """Minimiser of the cubic through (x1, f1, g1) and (x2, f2, g2), clamped to ``bounds`` (default [x1, x2])."""
    lo, hi = bounds if bounds is not None else ((x1, x2) if x1 <= x2 else (x2, x1))
    d1 = g1 + g2 - 3 * (f1 - f2) / (x1 - x2)
    disc = d1 ** 2 - g1 * g2
    if disc < 0:
        return (lo + hi) / 2.0
    d2 = np.sqrt(disc)
    if x1 <= x2:
        pos = x2 - (x2 - x1) * ((g2 + d2 - d1) / (g2 - g1 + 2 * d2))
    else:
        pos = x1 - (x1 - x2) * ((g1 + d2 - d1) / (g1 - g2 + 2 * d2))
    return min(max(pos, lo), hi)


def _strong_wolfe(evaluate: Callable, t, d: np.ndarray, f: float, g: np.ndarray, gtd, c1: float = 1e-4,
                  c2: float = 0.9, tolerance_change: float = 1e-9, max_ls: int = 25):
    """Bracketing + zoom line search along ``d``; returns (loss, flat grad, step, evaluations)."""
    d_norm = np.abs(d).max()
    f_new, g_new = evaluate(t)
    evals = 1
    gtd_new = g_new.dot(d)
    t_prev, f_prev, g_prev, gtd_prev = 0, f, g, gtd
    done = False
    it = 0
    # bracketing phase: find an interval holding a point that satisfies the Wolfe conditions
    while it < max_ls:
        if f_new > (f + c1 * t * gtd) or (it > 1 and f_new >= f_prev):
            br, br_f, br_g, br_gtd = [t_prev, t], [f_prev, f_new], [g_prev, g_new], [gtd_prev, gtd_new]
            break
        if abs(gtd_new) <= -c2 * gtd:
            br, br_f, br_g = [t], [f_new], [g_new]
            done = True
            break
        if gtd_new >= 0:
            br, br_f, br_g, br_gtd = [t_prev, t], [f_prev, f_new], [g_prev, g_new], [gtd_prev, gtd_new]
            break
        t_old = t
        t = _cubic_min(t_prev, f_prev, gtd_prev, t, f_new, gtd_new, bounds=(t + 0.01 * (t - t_prev), t * 10))
        t_prev, f_prev, g_prev, gtd_prev = t_old, f_new, g_new, gtd_new
        f_new, g_new = evaluate(t)
        evals += 1
        gtd_new = g_new.dot(d)
        it += 1
    if it == max_ls:
        br, br_f, br_g = [0, t], [f, f_new], [g, g_new]

    # zoom phase: shrink the bracket until a point satisfies the conditions
    insufficient = False
    low, high = (0, 1) if br_f[0] <= br_f[-1] else (1, 0)
    while not done and it < max_ls:
        if abs(br[1] - br[0]) * d_norm < tolerance_change:
            break
        t = _cubic_min(br[0], br_f[0], br_gtd[0], br[1], br_f[1], br_gtd[1])
        b_lo, b_hi = min(br), max(br)
        eps = 0.1 * (b_hi - b_lo)
        if min(b_hi - t, t - b_lo) < eps:
            # too close to an end: after a second such step (or on the end itself), move 10% inside
            if insufficient or t >= b_hi or t <= b_lo:
                t = b_hi - eps if abs(t - b_hi) < abs(t - b_lo) else b_lo + eps
                insufficient = False
            else:
                insufficient = True
        else:
            insufficient = False
        f_new, g_new = evaluate(t)
        evals += 1
        gtd_new = g_new.dot(d)
        it += 1
        if f_new > (f + c1 * t * gtd) or f_new >= br_f[low]:
            br[high], br_f[high], br_g[high], br_gtd[high] = t, f_new, g_new, gtd_new
            low, high = (0, 1) if br_f[0] <= br_f[1] else (1, 0)
        else:
            if abs(gtd_new) <= -c2 * gtd:
                done = True
            elif gtd_new * (br[high] - br[low]) >= 0:
                br[high], br_f[high], br_g[high], br_gtd[high] = br[low], br_f[low], br_g[low], br_gtd[low]
            br[low], br_f[low], br_g[low], br_gtd[low] = t, f_new, g_new, gtd_new
    return br_f[low], br_g[low], br[low], evals


def _as_np(v: Any) -> Any:
    """A state value with tensors (ember's or torch's) as arrays / NumPy scalars."""
    if isinstance(v, list):
        return [_as_np(x) for x in v]
    if isinstance(v, Tensor) or hasattr(v, "numpy"):
        a = _to_array(v)
        return a[()] if a.ndim == 0 else np.array(a, copy=True)
    return v


def _as_tensor(v: Any) -> Any:
    """Inverse of ``_as_np``: arrays and NumPy scalars become ember tensors (Python numbers stay)."""
    if isinstance(v, list):
        return [_as_tensor(x) for x in v]
    if isinstance(v, (np.ndarray, np.generic)):
        return _F.from_numpy(np.array(v))
    return v


class LBFGS(Optimizer):
    """L-BFGS over all parameters as one vector; ``step(closure)`` runs up to ``max_iter`` iterations.

    Only one parameter group is supported. ``line_search_fn`` is None (fixed step ``lr``) or ``"strong_wolfe"``.
    """

    def __init__(self, params, lr: float = 1, max_iter: int = 20, max_eval: int | None = None,
                 tolerance_grad: float = 1e-7, tolerance_change: float = 1e-9, history_size: int = 100,
                 line_search_fn: str | None = None) -> None:
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if max_eval is None:
            max_eval = max_iter * 5 // 4
        super().__init__(params, dict(lr=lr, max_iter=max_iter, max_eval=max_eval, tolerance_grad=tolerance_grad,
                                      tolerance_change=tolerance_change, history_size=history_size,
                                      line_search_fn=line_search_fn))
        if len(self.param_groups) != 1:
            raise ValueError("LBFGS doesn't support per-parameter options (parameter groups)")
        self._params = self.param_groups[0]["params"]

    # ------------------------------------------------------------------ the flat vector
    def _flat_grad(self) -> np.ndarray:
        return np.concatenate([np.zeros(p._data.size, p._data.dtype) if p._grad is None
                               else p._grad._data.reshape(-1) for p in self._params])

    def _move(self, t, d: np.ndarray) -> None:
        """params += t * d (d flat)."""
        offset = 0
        for p in self._params:
            n = p._data.size
            p._data += t * d[offset:offset + n].reshape(p._data.shape)
            p._bump()
            offset += n

    def _restore(self, saved: list[np.ndarray]) -> None:
        for p, x in zip(self._params, saved):
            p._data[...] = x
            p._bump()

    def _loss(self, closure: Callable) -> float:
        with enable_grad():
            return float(closure())

    # ------------------------------------------------------------------ step
    def step(self, closure: Callable):  # type: ignore[override]
        """Run up to ``max_iter`` L-BFGS iterations; ``closure`` re-computes the loss and gradients."""
        self._pre_step_hooks(closure)
        with no_grad():
            loss = self._iterate(closure)
        self._post_step_hooks(closure)
        return loss

    def _iterate(self, closure: Callable):
        if len(self.param_groups) != 1:
            raise AssertionError(f"Expected exactly one param_group, but got {len(self.param_groups)}")
        group = self.param_groups[0]
        lr = group["lr"]
        lr = float(lr) if isinstance(lr, Tensor) else lr
        max_iter, max_eval = group["max_iter"], group["max_eval"]
        tol_grad, tol_change = group["tolerance_grad"], group["tolerance_change"]
        line_search_fn, history_size = group["line_search_fn"], group["history_size"]

        state = self.state[self._params[0]]
        state.setdefault("func_evals", 0)
        state.setdefault("n_iter", 0)

        with enable_grad():
            orig_loss = closure()
        loss = float(orig_loss)
        evals = 1
        state["func_evals"] += 1
        flat_grad = self._flat_grad()
        if np.abs(flat_grad).max() <= tol_grad:
            return orig_loss

        d, t, H_diag, prev_flat_grad, prev_loss = (_as_np(state.get(k)) for k in
                                                   ("d", "t", "H_diag", "prev_flat_grad", "prev_loss"))
        old_dirs, old_stps, ro = (_as_np(state.get(k)) for k in ("old_dirs", "old_stps", "ro"))
        al = _as_np(state.get("al"))

        n_iter = 0
        while n_iter < max_iter:
            n_iter += 1
            state["n_iter"] += 1
            # ---- direction
            if state["n_iter"] == 1:
                d = -flat_grad
                old_dirs, old_stps, ro = [], [], []
                H_diag = 1
            else:
                y = flat_grad - prev_flat_grad
                s = d * t
                ys = y.dot(s)
                if ys > 1e-10:
                    if len(old_dirs) == history_size:
                        del old_dirs[0], old_stps[0], ro[0]
                    old_dirs.append(y)
                    old_stps.append(s)
                    ro.append(1.0 / ys)
                    H_diag = ys / y.dot(y)
                if al is None:
                    al = [None] * history_size
                # two-loop recursion: d = -H @ g
                q = -flat_grad
                for i in range(len(old_dirs) - 1, -1, -1):
                    al[i] = old_stps[i].dot(q) * ro[i]
                    q += -al[i] * old_dirs[i]
                d = q * H_diag
                for i in range(len(old_dirs)):
                    be_i = old_dirs[i].dot(d) * ro[i]
                    d += (al[i] - be_i) * old_stps[i]
            prev_flat_grad = np.array(flat_grad, copy=True)
            prev_loss = loss

            # ---- step length
            t = min(1.0, 1.0 / np.abs(flat_grad).sum()) * lr if state["n_iter"] == 1 else lr
            gtd = flat_grad.dot(d)
            if gtd > -tol_change:
                break
            ls_evals = 0
            if line_search_fn is not None:
                if line_search_fn != "strong_wolfe":
                    raise RuntimeError("only 'strong_wolfe' is supported")
                x0 = [np.array(p._data, copy=True) for p in self._params]

                def evaluate(step, d=d, x0=x0):
                    self._move(step, d)
                    f = self._loss(closure)
                    g = self._flat_grad()
                    self._restore(x0)
                    return f, g

                loss, flat_grad, t, ls_evals = _strong_wolfe(evaluate, t, d, loss, flat_grad, gtd,
                                                             max_ls=max_eval - evals)
                self._move(t, d)
                opt_cond = np.abs(flat_grad).max() <= tol_grad
            else:
                self._move(t, d)
                opt_cond = False
                if n_iter != max_iter:  # the last iteration's loss is not re-evaluated (torch's choice)
                    loss = self._loss(closure)
                    flat_grad = self._flat_grad()
                    opt_cond = np.abs(flat_grad).max() <= tol_grad
                    ls_evals = 1
            evals += ls_evals
            state["func_evals"] += ls_evals

            # ---- stopping rules
            if n_iter == max_iter or evals >= max_eval or opt_cond:
                break
            if np.abs(d * t).max() <= tol_change or abs(loss - prev_loss) < tol_change:
                break

        state.update(d=_as_tensor(d), t=_as_tensor(t), old_dirs=_as_tensor(old_dirs),
                     old_stps=_as_tensor(old_stps), ro=_as_tensor(ro), H_diag=_as_tensor(H_diag),
                     prev_flat_grad=_as_tensor(prev_flat_grad), prev_loss=prev_loss)
        if al is not None:
            state["al"] = _as_tensor(al)
        return orig_loss
