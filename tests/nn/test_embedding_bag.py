"""EmbeddingBag / F.embedding_bag against torch: bag encodings, modes, weights, padding, errors, printed form."""
import numpy as np
import pytest

from oracle import assert_close, check, ember, same_error, torch

W = np.random.default_rng(0).standard_normal((10, 3))


def _bag(lib, w, idx, offsets=None, **kw):
    return lib.nn.functional.embedding_bag(lib.tensor(idx), w, None if offsets is None else lib.tensor(offsets), **kw)


CASES = [
    (np.array([[1, 2, 4], [4, 3, 9]]), None, {}),
    (np.array([1, 2, 4, 5, 4, 3, 2, 9]), np.array([0, 4]), {}),
    (np.array([1, 2, 4, 5, 4, 3, 2, 9]), np.array([0, 0, 3, 8]), {}),  # empty bags first and last
    (np.array([1, 2, 4, 5, 4, 3]), np.array([0, 2, 6]), {"include_last_offset": True}),
    (np.array([0, 2, 0, 0, 4, 3]), np.array([0, 2, 4]), {"padding_idx": 0}),  # an all-padding bag
    (np.array([[1, 9, 9], [9, 9, 9]]), None, {"padding_idx": -1}),
    (np.array([], dtype=np.int64), np.array([0, 0]), {}),
]


@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
@pytest.mark.parametrize("case", range(len(CASES)))
def test_embedding_bag_values_and_weight_grads(mode, case):
    idx, off, kw = CASES[case]
    check(lambda lib, w: _bag(lib, w, idx, off, mode=mode, **kw), W, gradgrad=mode != "max")


@pytest.mark.parametrize("case", [0, 1, 2, 5])
def test_per_sample_weights_sum(case):
    idx, off, kw = CASES[case]
    psw = np.random.default_rng(1).standard_normal(idx.shape)
    check(lambda lib, w, p: _bag(lib, w, idx, off, mode="sum", per_sample_weights=p, **kw), W, psw)


def test_max_norm_renormalizes_used_rows_like_torch():
    w_e, w_t = ember.tensor(W * 3), torch.tensor(W * 3)
    idx, off = np.array([1, 2, 4, 1]), np.array([0, 2])
    assert_close(_bag(ember, w_e, idx, off, max_norm=1.0), _bag(torch, w_t, idx, off, max_norm=1.0))
    assert_close(w_e, w_t)


@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
def test_module_parity_and_printed_form(mode):
    kw = {"mode": mode, "padding_idx": 0, "include_last_offset": True}
    e, t = ember.nn.EmbeddingBag(10, 3, **kw), torch.nn.EmbeddingBag(10, 3, **kw)
    assert repr(e) == repr(t)
    assert e.weight[0].abs().sum().item() == 0 and e.weight.shape == t.weight.shape
    e.load_state_dict({"weight": t.weight.detach().numpy()})
    idx, off = np.array([0, 2, 3, 3, 0, 7]), np.array([0, 3, 6])
    ye, yt = e(ember.tensor(idx), ember.tensor(off)), t(torch.tensor(idx), torch.tensor(off))
    assert_close(ye, yt)
    ye.pow(2).sum().backward()
    yt.pow(2).sum().backward()
    assert_close(e.weight.grad, t.weight.grad)
    for spec in ["EmbeddingBag(5, 2)", "EmbeddingBag(5, 2, max_norm=1.0, norm_type=1.0, scale_grad_by_freq=True)",
                 "EmbeddingBag(5, 2, mode='sum', padding_idx=-2)"]:
        assert repr(eval("ember.nn." + spec)) == repr(eval("torch.nn." + spec))
    pe = ember.nn.EmbeddingBag.from_pretrained(ember.tensor(W), mode="sum")
    pt = torch.nn.EmbeddingBag.from_pretrained(torch.tensor(W), mode="sum")
    assert repr(pe) == repr(pt) and pe.weight.requires_grad == pt.weight.requires_grad
    assert_close(pe(ember.tensor([[1, 2]])), pt(torch.tensor([[1, 2]])))


ERRORS = [
    lambda lib: _bag(lib, lib.ones(10, 3), np.array([[1, 2]]), np.array([0])),
    lambda lib: _bag(lib, lib.ones(10, 3), np.array([1, 2, 3])),
    lambda lib: lib.nn.functional.embedding_bag(lib.tensor([1, 2]), lib.ones(10, 3), lib.tensor([[0]])),
    lambda lib: _bag(lib, lib.ones(10, 3), np.array([1, 2, 3]), np.array([0, 1]), mode="max",
                     per_sample_weights=lib.ones(3)),
    lambda lib: _bag(lib, lib.ones(10, 3), np.array([1, 2, 3]), np.array([0, 1]), mode="bad"),
    lambda lib: _bag(lib, lib.ones(10, 3), np.array([1, 2, 3]), np.array([0, 1]), mode="sum",
                     per_sample_weights=lib.ones(2)),
    lambda lib: _bag(lib, lib.ones(10, 3), np.array([1.0, 2.0]), np.array([0, 1])),
    lambda lib: _bag(lib, lib.ones(10, 3), np.array([1, 2, 3]), np.array([1, 2])),
    lambda lib: _bag(lib, lib.ones(10, 3), np.array([1, 2, 3]), np.array([0, 5])),
    lambda lib: lib.nn.EmbeddingBag(4, 2, padding_idx=4),
    lambda lib: lib.nn.EmbeddingBag(4, 2, _weight=lib.ones(3, 2)),
]


@pytest.mark.parametrize("i", range(len(ERRORS)))
def test_errors_match_torch(i):
    same_error(ERRORS[i])


@pytest.mark.parametrize("idx", [np.array([30, 2, 3]), np.array([[1, 30], [2, 3]])])
def test_out_of_range_index_error(idx):
    same_error(lambda lib: _bag(lib, lib.ones(10, 3), idx, None if idx.ndim == 2 else np.array([0, 1])),
               match_words=["of input takes value 30 which is not in the valid range [0, 10)"])
