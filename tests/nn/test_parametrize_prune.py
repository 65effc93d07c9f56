"""nn.utils.parametrize, nn.utils.parametrizations (orthogonal, weight_norm, spectral_norm), nn.utils.prune and the
old weight_norm / spectral_norm hooks against torch: each scenario runs on both libraries and returns what is
compared (values, gradients, state_dict keys, printed forms, class names)."""
import importlib
import warnings

import numpy as np
import pytest

from oracle import ember, same_error, same_outcome, torch

importlib.import_module("torch.nn.utils.prune")  # (torch does not load it with torch.nn.utils)


def _np(x):
    return x.detach().numpy() if hasattr(x, "detach") else x


def _same(scenario, atol=1e-5):
    """Run ``scenario(lib, rng)`` on ember and torch (same seed) and compare every returned item."""
    got = [scenario(lib, np.random.default_rng(0)) for lib in (ember, torch)]
    assert len(got[0]) == len(got[1])
    for i, (e, t) in enumerate(zip(*got)):
        if hasattr(t, "detach") or isinstance(t, np.ndarray):
            np.testing.assert_allclose(_np(e), _np(t), atol=atol, rtol=1e-5, err_msg=f"item {i}")
            assert tuple(e.shape) == tuple(t.shape), f"item {i}"
        else:
            assert e == t, f"item {i}: {e!r} vs {t!r}"


def _linear(lib, rng, n_in, n_out, dtype=np.float64):
    m = lib.nn.Linear(n_in, n_out).to(lib.float64 if dtype == np.float64 else lib.float32)
    m.load_state_dict({"weight": lib.tensor(rng.standard_normal((n_out, n_in)).astype(dtype)),
                       "bias": lib.tensor(rng.standard_normal(n_out).astype(dtype))})
    return m


class _Symmetric:
    @staticmethod
    def make(lib):
        class Symmetric(lib.nn.Module):
            def forward(self, X):
                return X.triu() + X.triu(1).transpose(-1, -2)
        return Symmetric()


def _scale(lib):
    class Scale(lib.nn.Module):
        def forward(self, X):
            return 2 * X

        def right_inverse(self, X):
            return X / 2
    return Scale()


# ---------------------------------------------------------------- parametrize
def test_register_chain_assign_cache_remove():
    def scenario(lib, rng):
        P = lib.nn.utils.parametrize
        m = _linear(lib, rng, 3, 3)
        w0 = m.weight
        P.register_parametrization(m, "weight", _Symmetric.make(lib))
        out = [repr(m), type(m).__name__, list(m.state_dict()), P.is_parametrized(m), P.is_parametrized(m, "bias"),
               m.parametrizations.weight.original is w0, m.weight]
        P.register_parametrization(m, "weight", _scale(lib))
        out += [repr(m), m.weight]
        P.register_parametrization(m, "bias", _scale(lib))
        m.bias = lib.tensor([2.0, 4.0, 6.0], dtype=lib.float64)  # through right_inverse into the original
        out += [m.parametrizations.bias.original, m.bias]
        x = lib.tensor(rng.standard_normal((2, 3)))
        y = m(x)
        gw, gb = lib.autograd.grad(y.sum() ** 2, [m.parametrizations.weight.original, m.parametrizations.bias.original],
                                   create_graph=True)
        out += [y, gw, gb, lib.autograd.grad(gw.sum(), m.parametrizations.weight.original)[0]]
        with P.cached():
            out.append(m.weight is m.weight)
        out += [m.weight is m.weight, P.type_before_parametrizations(m).__name__]
        P.remove_parametrizations(m, "weight")
        out += [repr(m), list(m.state_dict()), m.weight, type(m.weight).__name__]
        P.remove_parametrizations(m, "bias", leave_parametrized=False)
        out += [repr(m), type(m).__name__, m.bias, list(m.state_dict())]
        return out

    _same(scenario)


def test_parametrization_errors():
    def nonfloat(lib):
        class ToDouble(lib.nn.Module):
            def forward(self, x):
                return x.double()
        return ToDouble()

    P = "nn.utils.parametrize"
    for fn in [
        lambda lib: lib.nn.utils.parametrize.remove_parametrizations(lib.nn.Linear(2, 2), "weight"),
        lambda lib: lib.nn.utils.parametrize.register_parametrization(lib.nn.Linear(2, 2), "foo", _scale(lib)),
        lambda lib: lib.nn.utils.parametrize.register_parametrization(lib.nn.Linear(2, 3), "weight",
                                                                      _Symmetric.make(lib)),
        lambda lib: lib.nn.utils.parametrize.register_parametrization(lib.nn.Linear(2, 2), "weight", nonfloat(lib)),
        lambda lib: setattr(lib.nn.utils.parametrize.register_parametrization(
            lib.nn.Linear(2, 2), "weight", _Symmetric.make(lib)), "weight", lib.ones(2, 2)),
    ]:
        same_error(fn)
    del P


@pytest.mark.parametrize("chained, change", [(False, "dtype"), (False, "shape"), (True, "dtype"), (True, "shape"),
                                             (True, "inverse dtype"), (True, "inverse shape")])
def test_parametrization_may_not_change_dtype_or_shape(chained, change):
    # the whole message: torch's three texts name what changed, its two values and the tensor
    assert same_outcome(lambda lib: _register_changing(lib, chained, change))[0] == "raise"


def _register_changing(lib, chained: bool, change: str):
    """register_parametrization of a parametrization (or right_inverse) that changes the weight's dtype or shape,
    first on the weight or after a first parametrization."""
    alter = (lambda x: x.double()) if change.endswith("dtype") else (lambda x: x[:1])

    class Changing(lib.nn.Module):
        def forward(self, x):
            return x if change.startswith("inverse") else alter(x)

        def right_inverse(self, x):
            return alter(x) if change.startswith("inverse") else x

    class Same(lib.nn.Module):
        def forward(self, x):
            return x

    m = lib.nn.Linear(3, 2)
    if chained:
        lib.nn.utils.parametrize.register_parametrization(m, "weight", Same())
    lib.nn.utils.parametrize.register_parametrization(m, "weight", Changing())


def test_parametrized_module_state_dict_roundtrip_and_sharing():
    def scenario(lib, rng):
        P = lib.nn.utils.parametrize
        a = _linear(lib, rng, 3, 3)
        P.register_parametrization(a, "weight", _Symmetric.make(lib))
        b = lib.nn.Linear(3, 3).double()
        P.register_parametrization(b, "weight", _Symmetric.make(lib))
        b.load_state_dict(a.state_dict())
        c = lib.nn.Linear(3, 3).double()
        P.transfer_parametrizations_and_params(a, c)
        return [b.weight, list(b.state_dict()), repr(c), c.parametrizations.weight.original is
                a.parametrizations.weight.original]

    _same(scenario)


# ---------------------------------------------------------------- parametrizations
@pytest.mark.parametrize("dim", [0, 1, None])
def test_weight_norm_parametrization(dim):
    def scenario(lib, rng):
        m = lib.nn.utils.parametrizations.weight_norm(lib.nn.Conv1d(2, 3, 2).double(), dim=dim)
        sd = {k: lib.tensor(rng.standard_normal(tuple(v.shape))) for k, v in m.state_dict().items()}
        m.load_state_dict(sd)
        x = lib.tensor(rng.standard_normal((2, 2, 5)))
        y = m(x)
        g = lib.autograd.grad((y ** 2).sum(), list(m.parameters()), create_graph=True)
        gg = lib.autograd.grad(sum(t.sum() for t in g), list(m.parameters())[:2])
        return [repr(m), {k: tuple(v.shape) for k, v in m.state_dict().items()}, y, *g, *gg]

    _same(scenario)


def test_weight_norm_loads_old_state_dict():
    def scenario(lib, rng):
        old = {"weight_g": lib.tensor([[1.0], [2.0]]), "weight_v": lib.tensor(rng.standard_normal((2, 3))).float(),
               "bias": lib.zeros(2)}
        m = lib.nn.utils.parametrizations.weight_norm(lib.nn.Linear(3, 2))
        m.load_state_dict(old)
        return [list(m.state_dict()), m.weight]

    _same(scenario)


ORTHO = [((3, 3), None, True), ((5, 3), None, True), ((4, 4), "cayley", True), ((4, 2), "householder", False),
         ((2, 4), "householder", False), ((4, 4), "matrix_exp", False), ((3, 3), "householder", True),
         ((2, 3, 3), None, True)]


@pytest.mark.parametrize("shape,mp,triv", ORTHO, ids=lambda v: str(v))
def test_orthogonal(shape, mp, triv):
    def scenario(lib, rng):
        m = lib.nn.Module()
        m.weight = lib.nn.Parameter(lib.tensor(rng.standard_normal(shape)))
        lib.nn.utils.parametrizations.orthogonal(m, orthogonal_map=mp, use_trivialization=triv)
        w = m.weight
        n, k = shape[-2:]
        wtw = w.mT @ w if n >= k else w @ w.mT
        orig = m.parametrizations.weight.original
        g = lib.autograd.grad((m.weight ** 3).sum(), orig, create_graph=True)[0]
        gg = lib.autograd.grad((g ** 2).sum(), orig)[0]
        out = [repr(m), list(m.state_dict()), np.allclose(_np(wtw), np.eye(min(n, k)), atol=1e-6), w, orig]
        if not (triv and n != k):  # (a non-square base is completed with random columns: gradients differ)
            out += [g, gg]
        if triv:
            m.weight = lib.tensor(np.linalg.qr(rng.standard_normal(shape))[0])  # assign an orthogonal matrix
            out.append(m.weight)
        return out

    _same(scenario)


def test_orthogonal_errors():
    for fn in [lambda lib: lib.nn.utils.parametrizations.orthogonal(lib.nn.Linear(2, 2), orthogonal_map="qr"),
               lambda lib: lib.nn.utils.parametrizations.orthogonal(lib.nn.Linear(2, 2), "bias"),
               lambda lib: lib.nn.utils.parametrizations.orthogonal(lib.nn.Linear(2, 2), "foo"),
               lambda lib: setattr(lib.nn.utils.parametrizations.orthogonal(
                   lib.nn.Linear(2, 2), use_trivialization=False), "weight", lib.eye(2)),
               lambda lib: setattr(lib.nn.utils.parametrizations.orthogonal(lib.nn.Linear(2, 2)), "weight",
                                   lib.eye(3))]:
        same_error(fn)


@pytest.mark.parametrize("cls,dim", [("Linear", None), ("ConvTranspose2d", None), ("Conv2d", 1)])
def test_spectral_norm_parametrization(cls, dim):
    def scenario(lib, rng):
        layer = lib.nn.Linear(4, 3) if cls == "Linear" else getattr(lib.nn, cls)(2, 3, 2)
        m = lib.nn.utils.parametrizations.spectral_norm(layer.double(), dim=dim)
        sd = {k: lib.tensor(rng.standard_normal(tuple(v.shape))) for k, v in m.state_dict().items()}
        m.load_state_dict(sd)
        x = lib.tensor(rng.standard_normal((2, 4) if cls == "Linear" else (1, 2, 4, 4) if cls == "Conv2d"
                                           else (1, 2, 3, 3)))
        y1 = m(x)  # training: one power iteration updates _u, _v
        y2 = m(x)
        g = lib.autograd.grad(y2.sum(), m.parametrizations.weight.original)[0]
        m.eval()
        y3 = m(x)
        return [list(m.state_dict()), repr(m), y1, y2, g, y3, m.parametrizations.weight[0]._u]

    _same(scenario)


# ---------------------------------------------------------------- the old hooks
def test_old_weight_norm_and_spectral_norm():
    def scenario(lib, rng):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            wn = lib.nn.utils.weight_norm(lib.nn.Linear(3, 2).double())
        out = [[(str(w.message), w.category.__name__) for w in caught]]
        wn.load_state_dict({"weight_g": lib.tensor([[1.0], [2.0]], dtype=lib.float64),
                            "weight_v": lib.tensor(rng.standard_normal((2, 3))), "bias": lib.zeros(2).double()})
        x = lib.tensor(rng.standard_normal((2, 3)))
        y = wn(x)
        out += [list(wn.state_dict()), repr(wn), y, *lib.autograd.grad(y.sum(), [wn.weight_g, wn.weight_v])]
        lib.nn.utils.remove_weight_norm(wn)
        out += [list(wn.state_dict()), wn.weight, type(wn.weight).__name__]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            whole = lib.nn.utils.weight_norm(lib.nn.Conv1d(2, 3, 2), dim=None)
        out.append({k: tuple(v.shape) for k, v in whole.state_dict().items()})
        sn = lib.nn.utils.spectral_norm(lib.nn.Linear(4, 3).double())
        sn.load_state_dict({"weight_orig": lib.tensor(rng.standard_normal((3, 4))),
                            "weight_u": lib.tensor(rng.standard_normal(3)),
                            "weight_v": lib.tensor(rng.standard_normal(4)), "bias": lib.zeros(3).double()})
        y = sn(x.new_ones(2, 4))
        out += [list(sn.state_dict()), y, sn.weight_u, sn.weight_v,
                lib.autograd.grad(y.sum(), sn.weight_orig)[0], sn.state_dict()._metadata[""]]
        sn.eval()
        out.append(sn(x.new_ones(1, 4)))
        lib.nn.utils.remove_spectral_norm(sn)
        out += [list(sn.state_dict()), sn.weight]
        return out

    _same(scenario)
    for fn in [lambda lib: lib.nn.utils.remove_weight_norm(lib.nn.Linear(2, 2)),
               lambda lib: lib.nn.utils.remove_spectral_norm(lib.nn.Linear(2, 2)),
               lambda lib: lib.nn.utils.spectral_norm(lib.nn.utils.spectral_norm(lib.nn.Linear(2, 2))),
               lambda lib: lib.nn.utils.weight_norm(lib.nn.utils.weight_norm(lib.nn.Linear(2, 2))),
               lambda lib: lib.nn.utils.spectral_norm(lib.nn.Linear(2, 2), n_power_iterations=0),
               lambda lib: lib.nn.utils.spectral_norm(lib.nn.Linear(2, 2, bias=False), "bias"),
               lambda lib: lib.nn.utils.weight_norm(lib.nn.LazyLinear(2))]:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            same_error(fn)


# ---------------------------------------------------------------- prune
def test_prune_unstructured_structured_containers_remove():
    def scenario(lib, rng):
        prune = lib.nn.utils.prune
        m = _linear(lib, rng, 4, 3, np.float32)
        prune.l1_unstructured(m, "weight", 0.5)
        hook = next(iter(m._forward_pre_hooks.values()))
        out = [list(m.state_dict()), [n for n, _ in m.named_parameters()], [n for n, _ in m.named_buffers()],
               prune.is_pruned(m), m.weight_mask, m.weight, type(m.weight).__name__, type(hook).__name__]
        x = lib.tensor(rng.standard_normal((2, 4)).astype(np.float32))
        y = m(x)
        out += [y, lib.autograd.grad(y.sum(), m.weight_orig)[0]]
        prune.l1_unstructured(m, "weight", 2)  # chained: only the kept entries are candidates
        hook = next(iter(m._forward_pre_hooks.values()))
        out += [m.weight_mask, type(hook).__name__, len(hook), [type(h).__name__ for h in hook]]
        prune.ln_structured(m, "weight", 1, 2, 0)
        out.append(m.weight_mask)
        prune.remove(m, "weight")
        out += [list(m.state_dict()), m.weight, type(m.weight).__name__, prune.is_pruned(m)]
        c = lib.nn.Conv2d(2, 4, 2)
        c.load_state_dict({"weight": lib.tensor(rng.standard_normal((4, 2, 2, 2)).astype(np.float32)),
                           "bias": lib.tensor(rng.standard_normal(4).astype(np.float32))})
        prune.ln_structured(c, "weight", 0.5, 1, 0)
        prune.ln_structured(c, "weight", 1, float("inf"), 1)
        prune.l1_unstructured(c, "bias", 1, importance_scores=lib.tensor([3.0, 1.0, 2.0, 4.0]))
        prune.custom_from_mask(c, "bias", lib.tensor([1.0, 0.0, 1.0, 1.0]))
        out += [c.weight_mask, c.bias_mask, c(lib.ones(1, 2, 3, 3))]
        out.append(prune.L1Unstructured(2).prune(lib.tensor([3.0, -1.0, 2.0, 0.5])))
        ident = lib.nn.Linear(2, 2)
        prune.identity(ident, "weight")
        out += [ident.weight_mask, prune.is_pruned(lib.nn.Sequential(ident))]
        return out

    _same(scenario)


def test_global_unstructured():
    def scenario(lib, rng):
        prune = lib.nn.utils.prune
        a, b = _linear(lib, rng, 3, 2, np.float32), _linear(lib, rng, 2, 2, np.float32)
        prune.l1_unstructured(a, "weight", 1)
        params = [(a, "weight"), (b, "weight"), (b, "bias")]
        prune.global_unstructured(params, pruning_method=prune.L1Unstructured, amount=4)
        out = [a.weight_mask, b.weight_mask, b.bias_mask, list(a.state_dict())]
        s = {(b, "bias"): lib.tensor([10.0, 10.0])}
        prune.global_unstructured([(b, "weight"), (b, "bias")], pruning_method=prune.L1Unstructured, amount=0.25,
                                  importance_scores=s)
        return out + [b.weight_mask, b.bias_mask]

    _same(scenario)


def test_random_pruning_counts():
    for lib in (ember, torch):
        prune = lib.nn.utils.prune
        r = lib.nn.Linear(10, 6)
        prune.random_unstructured(r, "weight", 0.3)
        assert int(r.weight_mask.sum()) == 42
        prune.random_structured(r, "weight", 2, dim=0)
        assert int((r.weight_mask.sum(1) == 0).sum()) == 2  # the chained mask zeroes 2 whole rows
        assert set(np.unique(r.weight_mask.numpy())) <= {0.0, 1.0}


def test_prune_errors():
    for fn in [lambda lib: lib.nn.utils.prune.l1_unstructured(lib.nn.Linear(2, 2), "weight", 1.5),
               lambda lib: lib.nn.utils.prune.l1_unstructured(lib.nn.Linear(2, 2), "weight", 5),
               lambda lib: lib.nn.utils.prune.l1_unstructured(lib.nn.Linear(2, 2), "weight", "a"),
               lambda lib: lib.nn.utils.prune.ln_structured(lib.nn.Linear(2, 2), "bias", 1, 2, 0),
               lambda lib: lib.nn.utils.prune.ln_structured(lib.nn.Linear(2, 2), "weight", 1, 2, 3),
               lambda lib: lib.nn.utils.prune.remove(lib.nn.Linear(2, 2), "weight"),
               lambda lib: lib.nn.utils.prune.global_unstructured([(lib.nn.Linear(2, 2), "weight")],
                                                                  pruning_method=lib.nn.utils.prune.LnStructured,
                                                                  amount=1, n=1, dim=0),
               lambda lib: lib.nn.utils.prune.global_unstructured(5, lib.nn.utils.prune.L1Unstructured, amount=1),
               lambda lib: lib.nn.utils.prune.l1_unstructured(lib.nn.Linear(2, 2), "weight", 1,
                                                              importance_scores=lib.ones(3)),
               lambda lib: lib.nn.utils.prune.L1Unstructured(1).prune(lib.ones(2, 2), importance_scores=lib.ones(3))]:
        same_error(fn)
    m = ember.nn.Linear(2, 2)
    with pytest.raises(ValueError):
        ember.nn.utils.prune.ln_structured(m, "bias", 1, 2, 0)
    assert list(m.state_dict()) == ["weight", "bias"] and not m._forward_pre_hooks  # a failed prune is undone
