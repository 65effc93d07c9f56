"""torch.nn.attention.flex_attention against torch on the CPU: outputs and log-sum-exp for score_mods and
mask_mods, the BlockMask tables and printed forms, and torch's errors and warnings (CPU torch has no backward)."""
from __future__ import annotations

import importlib
import math
import warnings

import numpy as np
import pytest

from oracle import BF16, check, ember, same_error, same_outcome, torch


def FA(lib):
    return importlib.import_module(lib.__name__ + ".nn.attention.flex_attention")


@pytest.fixture(autouse=True)
def _quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the once-per-process "called without torch.compile()" notice
        yield


def causal(b, h, q_idx, kv_idx):
    return q_idx >= kv_idx


def sliding(b, h, q_idx, kv_idx):
    return (q_idx - kv_idx).abs() <= 2


def document(b, h, q_idx, kv_idx):
    return (q_idx // 3) == (kv_idx // 3)


def prefix(b, h, q_idx, kv_idx):
    return kv_idx < 2


def nothing(b, h, q_idx, kv_idx):
    return q_idx < 0


def first_rows_empty(b, h, q_idx, kv_idx):
    return (q_idx >= 2) & (kv_idx <= q_idx)


def softcap(score, b, h, q_idx, kv_idx):
    return 3.0 * (score / 3.0).tanh()


def alibi(score, b, h, q_idx, kv_idx):
    return score - (h + 1) * 0.25 * (q_idx - kv_idx).abs()


def batch_head_offset(score, b, h, q_idx, kv_idx):
    return score + b * 0.5 - h * 0.1


MASKS = {"none": None, "causal": causal, "sliding": sliding, "document": document,
         "prefix or causal": lambda lib: FA(lib).or_masks(prefix, causal),
         "causal and sliding": lambda lib: FA(lib).and_masks(causal, sliding), "empty rows": first_rows_empty,
         "nothing": nothing}
MODS = {"identity": None, "softcap": softcap, "alibi": alibi, "batch/head": batch_head_offset, "bias": "bias"}


def _mask(lib, name):
    m = MASKS[name]
    return m(lib) if name in ("prefix or causal", "causal and sliding") else m


def _run(lib, q, k, v, mask_name, mod_name, bias=None, block=4, B=None, H=None, **kw):
    fa = FA(lib)
    mod = MODS[mod_name]
    if mod == "bias":
        def mod(score, b, h, q_idx, kv_idx):
            return score + bias[h][q_idx - kv_idx + k.shape[2]]
    mask = _mask(lib, mask_name)
    bm = None if mask is None else fa.create_block_mask(mask, B, H, q.shape[2], k.shape[2], BLOCK_SIZE=block)
    return fa.flex_attention(q, k, v, score_mod=mod, block_mask=bm, **kw)


# every mask_mod with the identity score_mod, every score_mod under the causal mask, and a few crossings (torch's
# eager path compiles each new function with dynamo: the full product would take minutes)
PAIRS = sorted({*((m, "identity") for m in MASKS), *(("causal", f) for f in MODS), ("document", "bias"),
                ("empty rows", "alibi"), ("nothing", "softcap"), ("none", "batch/head")})


@pytest.mark.parametrize("mask,mod", PAIRS, ids=[f"{a}-{b}" for a, b in PAIRS])
def test_outputs_match_torch(mask, mod):
    rng = np.random.default_rng(len(mask) * 7 + len(mod))
    q, k, v = (rng.standard_normal(s).astype(np.float32) for s in ((2, 3, 9, 8), (2, 3, 11, 8), (2, 3, 11, 5)))
    bias = rng.standard_normal((3, 25)).astype(np.float32)
    check(lambda lib, q, k, v, bias: _run(lib, q, k, v, mask, mod, bias, B=2, H=3), q, k, v, bias, grad=False,
          atol=1e-5)


@pytest.mark.parametrize("dtype", [np.float64, np.float16, BF16])
def test_dtypes(dtype):
    rng = np.random.default_rng(1)
    q, k, v = (rng.standard_normal(s).astype(dtype) for s in ((1, 2, 7, 4), (1, 2, 7, 4), (1, 2, 7, 4)))
    check(lambda lib, q, k, v: _run(lib, q, k, v, "causal", "softcap", return_aux=FA(lib).AuxRequest(lse=True))[0],
          q, k, v, grad=False)
    check(lambda lib, q, k, v: _run(lib, q, k, v, "causal", "softcap", return_aux=FA(lib).AuxRequest(lse=True))[1]
          .lse, q, k, v, grad=False)


@pytest.mark.parametrize("case", ["gqa", "broadcast batch", "scale", "lse", "aux lse", "aux none", "block tuple",
                                  "head mask", "long block"])
def test_options(case):
    rng = np.random.default_rng(2)
    q = rng.standard_normal((2, 4, 6, 8)).astype(np.float32)
    k = rng.standard_normal((2, 2 if case == "gqa" else 4, 10, 8)).astype(np.float32)
    v = rng.standard_normal((2, k.shape[1], 10, 3)).astype(np.float32)
    if case == "broadcast batch":
        k, v = k[:1], v[:1]

    def run(lib, q, k, v):
        fa = FA(lib)
        kw = {}
        if case == "gqa":
            kw["enable_gqa"] = True
        if case == "scale":
            kw["scale"] = 0.05
        if case == "lse":
            kw["return_lse"] = True
        if case.startswith("aux"):
            kw["return_aux"] = fa.AuxRequest(lse=case == "aux lse")
        if case == "head mask":
            bm = fa.create_block_mask(lambda b, h, qi, ki: (h % 2 == 0) | (qi >= ki), 2, 4, 6, 10, BLOCK_SIZE=3)
        else:
            bm = fa.create_block_mask(causal, 2 if case == "broadcast batch" else None, None, 6, 10,
                                      BLOCK_SIZE=(2, 4) if case == "block tuple" else 128 if case == "long block"
                                      else 4)
        out = fa.flex_attention(q, k, v, block_mask=bm, **kw)
        if case.startswith("aux"):
            return [out[0]] + [x for x in out[1] if x is not None]
        return out
    check(run, q, k, v, grad=False, atol=1e-5)


MASK_BUILDS = {
    "causal 2x3 blocks": lambda fa: fa.create_block_mask(causal, 2, 3, 10, 12, BLOCK_SIZE=4),
    "document, no full split": lambda fa: fa.create_block_mask(document, None, None, 9, 9, BLOCK_SIZE=3,
                                                               separate_full_blocks=False),
    "sliding, tuple block": lambda fa: fa.create_block_mask(sliding, 1, 2, 13, 7, BLOCK_SIZE=(4, 2)),
    "default block": lambda fa: fa.create_block_mask(causal, None, None, 300, 300),
    "nothing": lambda fa: fa.create_block_mask(nothing, 1, 1, 8, 8, BLOCK_SIZE=4),
    "or/and": lambda fa: fa.create_block_mask(fa.and_masks(sliding, fa.or_masks(prefix, causal)), 1, 1, 16, 16,
                                              BLOCK_SIZE=4),
    "from_kv_blocks": lambda fa: fa.BlockMask.from_kv_blocks(
        fa.create_block_mask(causal, 1, 1, 8, 8, BLOCK_SIZE=2).kv_num_blocks,
        fa.create_block_mask(causal, 1, 1, 8, 8, BLOCK_SIZE=2).kv_indices, BLOCK_SIZE=2),
    "from_kv_blocks no q": lambda fa: fa.BlockMask.from_kv_blocks(
        fa.create_block_mask(causal, 1, 1, 8, 8, BLOCK_SIZE=2).kv_num_blocks,
        fa.create_block_mask(causal, 1, 1, 8, 8, BLOCK_SIZE=2).kv_indices, compute_q_blocks=False),
}


def _describe(bm):
    tables = [None if getattr(bm, a) is None else getattr(bm, a).tolist() for a in
              ("kv_num_blocks", "kv_indices", "full_kv_num_blocks", "full_kv_indices", "q_num_blocks", "q_indices",
               "full_q_num_blocks", "full_q_indices")]
    dense = bm.to_dense()
    return (str(bm), repr(bm), tables, bm.shape, bm.numel(), round(bm.sparsity(), 6), str(dense.dtype), dense.tolist(),
            bm.to_string(grid_size=3, limit=1), bm.to_string(grid_size=-1), [str(x) if not callable(x) else
                                                                             x.__name__ for x in bm.as_tuple()],
            len(bm.as_tuple(flatten=False)), str(bm.kv_num_blocks.dtype))


@pytest.mark.parametrize("build", list(MASK_BUILDS.values()), ids=list(MASK_BUILDS))
def test_block_mask_tables_and_printing(build):
    same_outcome(lambda lib: _describe(build(FA(lib))))


@pytest.mark.parametrize("index", [0, -1, (0, 1), (slice(0, 2), slice(1, 2)), (0, 0, slice(1, None)),
                                   (slice(None), slice(None), "tensor")], ids=str)
def test_block_mask_slicing(index):
    def run(lib):
        bm = FA(lib).create_block_mask(causal, 2, 3, 10, 12, BLOCK_SIZE=4)
        idx = index
        if isinstance(idx, tuple) and idx[-1] == "tensor":
            idx = idx[:-1] + (lib.tensor([1], dtype=lib.int32),)
        sliced = bm[idx]
        return _describe(sliced)[2:], sliced.mask_mod.__name__
    same_outcome(run)


@pytest.mark.parametrize("size", [(6, 6), (10, 5), (3, 12), (1, 1)])
def test_block_mask_adjust(size):
    same_outcome(lambda lib: _describe(FA(lib).create_block_mask(causal, 1, 2, 10, 12, BLOCK_SIZE=4)._adjust(*size)))


def test_block_mask_to_and_flex_with_adjusted_mask():
    for lib in (ember, torch):
        bm = FA(lib).create_block_mask(causal, 1, 1, 8, 8, BLOCK_SIZE=4)
        moved = bm.to("cpu")
        assert moved is not bm and moved.kv_num_blocks.tolist() == bm.kv_num_blocks.tolist()
        assert moved.mask_mod is causal
    rng = np.random.default_rng(4)
    q = rng.standard_normal((1, 1, 5, 4)).astype(np.float32)
    check(lambda lib, q: FA(lib).flex_attention(q, q, q, block_mask=FA(lib).create_block_mask(
        causal, 1, 1, 8, 8, BLOCK_SIZE=4)._adjust(5, 5)), q, grad=False)


@pytest.mark.parametrize("mod", [causal, sliding, softcap, alibi], ids=lambda f: f.__name__)
def test_create_mask(mod):
    same_outcome(lambda lib: FA(lib).create_mask(mod, 2, 2, 5, 6).tolist())
    same_outcome(lambda lib: FA(lib).create_mask(mod, None, None, 4, 4, device="cpu").tolist())


def test_noop_mask_and_combinators():
    for lib in (ember, torch):
        fa = FA(lib)
        one = lib.tensor(1)
        assert fa.noop_mask(one, one, one, one).tolist() is True
        assert str(fa.noop_mask(one, one, one, one).dtype) == "torch.bool"
        assert fa.or_masks(nothing)(one, one, one, one).tolist() is False
        assert fa.and_masks()(one, one, one, one).tolist() is True
        assert fa.AuxRequest() == (False, False) and fa.AuxOutput() == (None, None)
        assert set(fa.__all__) == set(FA(torch).__all__)


def _qkv(lib, grad=False, shape=(1, 2, 4, 4)):
    t = lib.ones(*shape)
    return t.clone().requires_grad_(grad), t.clone(), t.clone()


ERRORS = {
    "requires grad": lambda lib, fa: fa.flex_attention(*_qkv(lib, True)),
    "3-d": lambda lib, fa: fa.flex_attention(*_qkv(lib, shape=(2, 4, 4))),
    "1-d": lambda lib, fa: fa.flex_attention(lib.ones(4), lib.ones(4), lib.ones(4)),
    "heads": lambda lib, fa: fa.flex_attention(lib.ones(1, 4, 3, 2), lib.ones(1, 2, 3, 2), lib.ones(1, 2, 3, 2)),
    "gqa heads": lambda lib, fa: fa.flex_attention(lib.ones(1, 3, 3, 2), lib.ones(1, 2, 3, 2), lib.ones(1, 2, 3, 2),
                                                    enable_gqa=True),
    "embed dim": lambda lib, fa: fa.flex_attention(lib.ones(1, 2, 3, 2), lib.ones(1, 2, 3, 4), lib.ones(1, 2, 3, 4)),
    "batch": lambda lib, fa: fa.flex_attention(lib.ones(2, 2, 3, 2), lib.ones(3, 2, 3, 2), lib.ones(3, 2, 3, 2)),
    "batch vs mask": lambda lib, fa: fa.flex_attention(
        lib.ones(2, 2, 4, 2), lib.ones(3, 2, 4, 2), lib.ones(3, 2, 4, 2),
        block_mask=fa.create_block_mask(causal, 1, 1, 4, 4)),
    "batches broadcast": lambda lib, fa: fa.flex_attention(
        lib.ones(2, 2, 4, 2), lib.ones(3, 2, 4, 2), lib.ones(3, 2, 4, 2),
        block_mask=fa.create_block_mask(causal, 2, 1, 4, 4)),
    "mask too small": lambda lib, fa: fa.flex_attention(*_qkv(lib), block_mask=fa.create_block_mask(causal, 1, 1,
                                                                                                     2, 2)),
    "mask too large": lambda lib, fa: fa.flex_attention(*_qkv(lib), block_mask=fa.create_block_mask(causal, 1, 1,
                                                                                                     8, 8)),
    "sliced mask": lambda lib, fa: fa.flex_attention(*_qkv(lib), block_mask=fa.create_block_mask(causal, 2, 1, 4,
                                                                                                  4)[0]),
    "lse and aux": lambda lib, fa: fa.flex_attention(*_qkv(lib), return_lse=True, return_aux=fa.AuxRequest(lse=True)),
    "max scores": lambda lib, fa: fa.flex_attention(*_qkv(lib), return_aux=fa.AuxRequest(max_scores=True)),
    "backend": lambda lib, fa: fa.flex_attention(*_qkv(lib), kernel_options={"BACKEND": "CUDA"}),
    "backend + force": lambda lib, fa: fa.flex_attention(*_qkv(lib), kernel_options={
        "BACKEND": "TRITON", "FORCE_USE_FLEX_ATTENTION": True}),
    "flash max": lambda lib, fa: fa.flex_attention(*_qkv(lib), kernel_options={"BACKEND": "FLASH"},
                                                   return_aux=fa.AuxRequest(max_scores=True)),
    "internal option": lambda lib, fa: fa.flex_attention(*_qkv(lib), kernel_options={"OUTPUT_MAX": True}),
    "score_mod as mask": lambda lib, fa: fa.create_block_mask(softcap, 1, 1, 4, 4),
    "three args": lambda lib, fa: fa.create_block_mask(lambda a, b, c: a, 1, 1, 4, 4),
    "or non-callable": lambda lib, fa: fa.or_masks(causal, 3),
    "and non-callable": lambda lib, fa: fa.and_masks(None),
    "dq_kv_order": lambda lib, fa: fa.create_block_mask(causal, 1, 1, 4, 4, dq_kv_order=1),
    "sliced mask_mod": lambda lib, fa: fa.create_block_mask(causal, 2, 1, 4, 4)[0].mask_mod(*[lib.tensor(0)] * 4),
    "1-d indices": lambda lib, fa: fa.BlockMask.from_kv_blocks(lib.ones(1, dtype=lib.int32),
                                                              lib.zeros(1, dtype=lib.int32)),
    "half full pair": lambda lib, fa: fa.BlockMask.from_kv_blocks(lib.ones(1, 1, dtype=lib.int32),
                                                                 lib.zeros(1, 1, 1, dtype=lib.int32),
                                                                 lib.ones(1, 1, dtype=lib.int32)),
}


@pytest.mark.parametrize("fn", list(ERRORS.values()), ids=list(ERRORS))
def test_errors(fn):
    same_error(lambda lib: fn(lib, FA(lib)))


def test_warnings_once_per_process():
    got = []
    for lib in (ember, torch):
        fa = FA(lib)
        fa._WARNINGS_SHOWN.clear()
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            q = lib.ones(1, 1, 2, 2)
            fa.flex_attention(q, q, q, return_lse=True)
            fa.flex_attention(q, q, q, return_lse=True)
            fa.create_block_mask(causal, 1, 1, 2, 2, _compile=lib is ember)  # torch's _compile runs torch.compile
        got.append([(x.category.__name__, str(x.message)) for x in w if "_compile" not in str(x.message)])
        dep = [x for x in w if "_compile" in str(x.message)]
        assert lib is torch or (len(dep) == 1 and dep[0].category is DeprecationWarning)
    assert got[0] == got[1] and len(got[0]) == 2


def test_lse_of_fully_masked_rows_and_large_scores():
    rng = np.random.default_rng(5)
    q = (rng.standard_normal((1, 1, 6, 4)) * 30).astype(np.float32)
    check(lambda lib, q: FA(lib).flex_attention(q, q * 0.5, q, block_mask=FA(lib).create_block_mask(
        first_rows_empty, 1, 1, 6, 6, BLOCK_SIZE=2), return_lse=True), q, grad=False, atol=1e-5)
    out, lse = FA(ember).flex_attention(*(ember.tensor(q),) * 3, block_mask=FA(ember).create_block_mask(
        first_rows_empty, 1, 1, 6, 6, BLOCK_SIZE=2), return_lse=True)
    assert not out[0, 0, :2].abs().sum().item() and lse[0, 0, 0].item() == -math.inf
