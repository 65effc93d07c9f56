"""F.ctc_loss / nn.CTCLoss against torch: losses and gradients of log_probs on random alignments (repeated labels,
blanks in targets, empty targets, too-short inputs), every target layout, reductions, zero_infinity, errors."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from oracle import check, ember, same_error, to_np, torch


def _ctc(red="mean", zi=False, blank=0, layout=None):
    def fn(lib, x, tg, il, tl):
        lp = x.log_softmax(-1)
        if layout == "tuple":
            il, tl = tuple(int(v) for v in to_np(il)), tuple(int(v) for v in to_np(tl))
        return lib.nn.functional.ctc_loss(lp, tg, il, tl, blank=blank, reduction=red, zero_infinity=zi)
    return fn


@settings(max_examples=40, deadline=None)
@given(t=st.integers(1, 9), n=st.integers(1, 4), c=st.integers(2, 6), s=st.integers(0, 5), seed=st.integers(0, 2**16),
       red=st.sampled_from(["none", "mean", "sum"]), zi=st.booleans(), f64=st.booleans())
def test_random_alignments_match_torch(t, n, c, s, seed, red, zi, f64):
    rng = np.random.default_rng(seed)
    blank = int(rng.integers(0, c))
    x = rng.standard_normal((t, n, c)).astype(np.float64 if f64 else np.float32)
    tg = rng.integers(0, c - 1, (n, s))  # repeated labels; never the blank (torch's documented contract)
    tg[tg >= blank] += 1
    il = rng.integers(0, t + 1, n)
    tl = rng.integers(0, s + 1, n)
    # without zero_infinity an impossible alignment has an infinite loss and NaN gradients: compared as such
    check(_ctc(red, zi, blank), x, tg, il, tl, rtol=1e-4 if not f64 else None, atol=1e-5 if not f64 else None)


@pytest.mark.parametrize("red", ["none", "mean", "sum"])
def test_concatenated_targets_and_tuple_lengths(red):
    rng = np.random.default_rng(1)
    tl = np.array([3, 0, 2, 4])
    x = rng.standard_normal((8, 4, 5))
    tg = rng.integers(1, 5, int(tl.sum()))
    il = np.array([8, 5, 6, 8])
    check(_ctc(red), x, tg, il, tl)
    check(_ctc(red, layout="tuple"), x, tg, il, tl)


@pytest.mark.parametrize("red", ["none", "mean", "sum"])
def test_unbatched(red):
    rng = np.random.default_rng(2)
    x = rng.standard_normal((6, 4))
    check(_ctc(red), x, np.array([1, 1, 3]), np.array(6), np.array(3))


def test_int32_lengths_and_targets_float32_log_probs():
    rng = np.random.default_rng(3)
    x = rng.standard_normal((10, 3, 7)).astype(np.float32)
    check(_ctc("mean"), x, rng.integers(1, 7, (3, 4)).astype(np.int32), np.array([10, 9, 4], np.int32),
          np.array([4, 1, 2], np.int32), rtol=1e-4, atol=1e-6)


def test_zero_infinity_zeroes_impossible_samples_and_their_grads():
    rng = np.random.default_rng(4)
    x = rng.standard_normal((3, 2, 4))
    tg, il, tl = np.array([[1, 1, 2], [1, 2, 3]]), np.array([3, 3]), np.array([3, 3])  # "1 1" needs a blank between
    e, t = check(_ctc("none", zi=True), x, tg, il, tl)
    assert to_np(t[0])[0] == 0 and np.isfinite(to_np(t[0])[1])
    e, t = check(_ctc("none"), x, tg, il, tl)
    assert np.isinf(to_np(t[0])[0])


def test_module_form_and_printed_form():
    rng = np.random.default_rng(5)
    x = rng.standard_normal((6, 2, 4))
    tg, il, tl = rng.integers(1, 4, (2, 3)), np.array([6, 5]), np.array([3, 2])
    check(lambda lib, x, tg, il, tl: lib.nn.CTCLoss(blank=0, reduction="sum", zero_infinity=True)(
        x.log_softmax(2), tg, il, tl), x, tg, il, tl)
    assert repr(ember.nn.CTCLoss(blank=1, zero_infinity=True)) == repr(torch.nn.CTCLoss(blank=1, zero_infinity=True))


def test_grad_fn_names_and_no_double_backward():
    lps = {lib: lib.tensor(np.random.default_rng(6).standard_normal((5, 2, 4))).log_softmax(2).detach()
           .requires_grad_() for lib in (ember, torch)}
    names = []
    for lib, lp in lps.items():
        args = (lib.tensor([[1, 2], [3, 3]]), lib.tensor([5, 5]), lib.tensor([2, 2]))
        none = lib.nn.functional.ctc_loss(lp, *args, reduction="none")
        zero = lib.nn.functional.ctc_loss(lp, *args, reduction="none", zero_infinity=True)
        mean = lib.nn.functional.ctc_loss(lp, *args)
        names.append([type(y.grad_fn).__name__ for y in (none, zero, mean)])
    assert names[0] == names[1]

    def double(lib):
        loss = lib.nn.functional.ctc_loss(lps[lib], lib.tensor([[1, 2], [3, 3]]), lib.tensor([5, 5]),
                                          lib.tensor([2, 2]))
        (g,) = lib.autograd.grad(loss, lps[lib], create_graph=True)
        g.sum().backward()
    same_error(double)


def test_forward_ad_is_not_supported_like_torch():
    def fwd(lib):
        with lib.autograd.forward_ad.dual_level():
            lp = lib.autograd.forward_ad.make_dual(lib.zeros(4, 1, 3).log_softmax(2), lib.ones(4, 1, 3))
            lib.nn.functional.ctc_loss(lp, lib.tensor([[1]]), lib.tensor([4]), lib.tensor([1]))
    same_error(fwd)


_LP = np.random.default_rng(7).standard_normal((5, 3, 4))


@pytest.mark.parametrize("args", [
    dict(il=[6, 5, 5]),  # longer than T
    dict(il=[5, 5, -1]),
    dict(tl=[2, 2, -1]),
    dict(tl=[3, 2, 2]),  # more than the padded targets hold
    dict(il=[5, 5]),  # not one per sample
    dict(tl=[2, 2]),
    dict(tg=[1, 2, 1, 1, 3]),  # concatenated, wrong total
    dict(blank=4),
    dict(reduction="bad"),
    dict(il=[5.0, 5.0, 5.0]),
    dict(dtype="float16"),
], ids=str)
def test_errors_match_torch(args):
    def fn(lib):
        lp = lib.tensor(_LP).log_softmax(2)
        if "dtype" in args:
            lp = lp.to(getattr(lib, args["dtype"]))
        tg = lib.tensor(args.get("tg", [[1, 2], [1, 1], [3, 3]]))
        il = lib.tensor(args.get("il", [5, 5, 5]))
        tl = lib.tensor(args.get("tl", [2, 2, 2]))
        return lib.nn.functional.ctc_loss(lp, tg, il, tl, blank=args.get("blank", 0),
                                          reduction=args.get("reduction", "mean"))
    same_error(fn)


def test_invalid_target_values_raise():
    # torch reads outside log_probs for an out-of-range label and returns a wrong gradient for a blank label inside a
    # target (both break its documented contract); ember refuses instead. Blanks past a target's length are padding.
    lp = ember.tensor(_LP).log_softmax(2)
    lengths = ember.tensor([5, 5, 5]), ember.tensor([2, 2, 1])
    with pytest.raises(IndexError, match="out of bounds"):
        ember.nn.functional.ctc_loss(lp, ember.tensor([[1, 2], [1, 7], [3, 3]]), *lengths)
    with pytest.raises(ValueError, match="blank label"):
        ember.nn.functional.ctc_loss(lp, ember.tensor([[1, 2], [0, 1], [3, 3]]), *lengths)
    ember.nn.functional.ctc_loss(lp, ember.tensor([[1, 2], [2, 1], [3, 0]]), *lengths)
