"""Tensor metadata and conversion against torch: shape/size/stride, item/tolist/numpy, Python protocols,
requires_grad rules, detach/data/clone, Size."""

import copy
import pickle

import numpy as np
import pytest

from oracle import ember, same_outcome, torch


def mk(L):
    return L.arange(6.0).reshape(2, 3)


CASES = {
    "shape": lambda L: mk(L).shape,
    "size": lambda L: mk(L).size(),
    "size1": lambda L: mk(L).size(-1),
    "size_err": lambda L: mk(L).size(2),
    "size0d": lambda L: L.tensor(1.0).size(0),
    "size0dm1": lambda L: L.tensor(1.0).size(-1),
    "dim": lambda L: mk(L).dim(),
    "ndim": lambda L: mk(L).ndim,
    "numel": lambda L: mk(L).numel(),
    "T": lambda L: mk(L).T.tolist(),
    "T1": lambda L: L.ones(3).T.shape,
    "mT": lambda L: mk(L).mT.shape,
    "mT1": lambda L: L.ones(3).mT,
    "T3": lambda L: L.ones(2, 3, 4).T.shape,
    "item": lambda L: L.tensor([2.5]).item(),
    "itemi": lambda L: L.tensor(3).item(),
    "itemb": lambda L: L.tensor(True).item(),
    "item_err": lambda L: mk(L).item(),
    "item_empty": lambda L: L.ones(0).item(),
    "tolist": lambda L: mk(L).tolist(),
    "tolist0": lambda L: L.tensor(2).tolist(),
    "tolist16": lambda L: L.tensor([1.5], dtype=L.float16).tolist(),
    "numpy_rg": lambda L: L.ones(2, requires_grad=True).numpy(),
    "numpy_force": lambda L: L.ones(2, requires_grad=True).numpy(force=True).tolist(),
    "array": lambda L: np.asarray(mk(L)).tolist(),
    "array_dt": lambda L: str(np.asarray(mk(L)).dtype),
    "array_rg": lambda L: np.asarray(L.ones(2, requires_grad=True)),
    "array_dtype": lambda L: str(np.asarray(mk(L), dtype=np.float64).dtype),
    "nparray": lambda L: np.array(L.ones(2, dtype=L.int32)).dtype.name,
    "len": lambda L: len(mk(L)),
    "len0": lambda L: len(L.tensor(1.0)),
    "iter0": lambda L: list(L.tensor(1.0)),
    "iter": lambda L: [t.tolist() for t in mk(L)],
    "bool_many": lambda L: bool(L.ones(2)),
    "bool_none": lambda L: bool(L.ones(0)),
    "bool1": lambda L: bool(L.ones(1, 1)),
    "bool0": lambda L: bool(L.tensor(0.0)),
    "float": lambda L: float(L.tensor([[2.5]])),
    "float_many": lambda L: float(L.ones(2)),
    "float_none": lambda L: float(L.ones(0)),
    "int": lambda L: int(L.tensor(2.7)),
    "int_neg": lambda L: int(L.tensor(-2.7)),
    "int_many": lambda L: int(L.ones(2)),
    "index": lambda L: [1, 2, 3][L.tensor(1)],
    "index_f": lambda L: [1, 2, 3][L.tensor(1.0)],
    "index_many": lambda L: [1, 2, 3][L.tensor([1])],
    "index_bool": lambda L: [1, 2, 3][L.tensor(True)],
    "index_many2": lambda L: [1, 2, 3][L.tensor([1, 2])],
    "leaf": lambda L: (
        L.ones(2).is_leaf,
        L.ones(2, requires_grad=True).is_leaf,
        (L.ones(2, requires_grad=True) * 2).is_leaf,
        (L.ones(2) * 2).is_leaf,
    ),
    "rg_int": lambda L: setattr(L.ones(2, dtype=L.int64), "requires_grad", True),
    "rg_int_": lambda L: L.ones(2, dtype=L.int64).requires_grad_(),
    "rg_int_false": lambda L: L.ones(2, dtype=L.int64).requires_grad_(False).requires_grad,
    "rg_nonleaf": lambda L: setattr(L.ones(2, requires_grad=True) * 2, "requires_grad", False),
    "rg_nonleaf_true": lambda L: ((L.ones(2, requires_grad=True) * 2).requires_grad_(True)).requires_grad,
    "rg_nonleaf_nograd": lambda L: setattr(L.ones(2) * 2, "requires_grad", True),
    "elsize": lambda L: [
        L.ones(1, dtype=getattr(L, n)).element_size()
        for n in ["bool", "uint8", "int16", "int32", "int64", "float16", "float32", "float64"]
    ],
    "stride": lambda L: (
        mk(L).stride(),
        mk(L).t().stride(),
        mk(L).stride(1),
        mk(L).stride(-1),
        L.tensor(1.0).stride(),
        mk(L)[:, ::2].stride(),
    ),
    "stride_err": lambda L: mk(L).stride(2),
    "contig": lambda L: (
        mk(L).is_contiguous(),
        mk(L).t().is_contiguous(),
        mk(L)[:, 1:].is_contiguous(),
        L.ones(1, 3).t().is_contiguous(),
        L.ones(0, 3).t().is_contiguous(),
    ),
    "Size": lambda L: (
        repr(mk(L).shape),
        str(mk(L).shape),
        repr(L.Size([])),
        repr(L.tensor(1.0).shape),
        mk(L).shape == (2, 3),
        mk(L).shape.numel(),
        repr(mk(L).shape[1:]),
        repr(L.Size([2]) + L.Size([3])),
        repr(L.Size([2]) + (3,)),
    ),
    "Size_in": lambda L: isinstance(mk(L).shape, tuple),
    "is_tensor": lambda L: (L.is_tensor(mk(L)), L.is_tensor(np.ones(2)), L.is_tensor([1])),
    "numel_fn": lambda L: L.numel(mk(L)),
    "nbytes": lambda L: (mk(L).nbytes, mk(L).itemsize),
    "storage_off": lambda L: (mk(L)[1].storage_offset(), mk(L)[:, 1].storage_offset()),
    "clone": lambda L: (lambda x: (x.clone().tolist(), x.clone().requires_grad, x.clone().grad_fn.name()))(
        L.ones(2, requires_grad=True)
    ),
    "detach": lambda L: (
        lambda x: (x.detach().requires_grad, x.detach().is_leaf, x.detach().data_ptr() == x.data_ptr())
    )(L.ones(2, requires_grad=True) * 2),
    "data": lambda L: (lambda x: (x.data.requires_grad, x.data.data_ptr() == x.data_ptr(), x.data.is_leaf))(
        L.ones(2, requires_grad=True) * 2
    ),
    "format": lambda L: f"{L.tensor(2.5):.2f}",
    "format1": lambda L: f"{L.tensor([2.5])}",
    "format_err": lambda L: f"{L.tensor([2.5]):.2f}",
    "complex": lambda L: complex(L.tensor(2.0)),
    "hash": lambda L: isinstance(hash(L.ones(1)), int),
    "neg0": lambda L: L.tensor(-0.0).item(),
    "bool_item": lambda L: L.ones(2, dtype=L.bool).tolist(),
    "ndimension": lambda L: (mk(L).ndimension(), mk(L).nelement()),
    "iter_1d": lambda L: [type(v).__name__ for v in L.ones(2)][0],
    "contains": lambda L: (2.0 in mk(L), 9.0 in mk(L)),
    "reversed": lambda L: [v.tolist() for v in reversed(L.arange(3))],
    "len_size": lambda L: len(mk(L).shape),
    "dtype_itemsize": lambda L: L.float16.itemsize,
    "requires_grad_ret": lambda L: (lambda x: x.requires_grad_() is x)(L.ones(2)),
    "size_mul": lambda L: L.Size([2, 3]) * 2,
    "size_rmul": lambda L: 2 * L.Size([2, 3]),
    "size_radd": lambda L: (1,) + L.Size([2]),
    "size_rev": lambda L: L.Size([2, 3])[::-1],
    "size_eq_list": lambda L: L.Size([2]) == [2],
    "size_hash": lambda L: hash(L.Size([2])) == hash((2,)),
    "size_str": lambda L: str(L.Size([2, 3])),
    "size_bad": lambda L: L.Size([2.5]),
    "size_tensor": lambda L: L.Size([L.tensor(2)]),
    "size_pickle": lambda L: pickle.loads(pickle.dumps(L.Size([2, 3]))),
    "size_count": lambda L: L.Size([2, 2]).count(2),
    "size_numel0": lambda L: L.Size([]).numel(),
    "size_index": lambda L: L.Size([4, 5]).index(5),
    "size_type": lambda L: type(L.ones(2, 3).shape[0]).__name__,
    "tensor_pickle": lambda L: pickle.loads(pickle.dumps(L.tensor([1.5, 2], requires_grad=True))),
    "tensor_pickle_i": lambda L: pickle.loads(pickle.dumps(L.tensor([1, 2], dtype=L.int32))),
    "deepcopy": lambda L: copy.deepcopy(L.tensor([1.5, 2], requires_grad=True)),
    "deepcopy_nonleaf": lambda L: copy.deepcopy(L.tensor([1.5, 2], requires_grad=True) * 2),
    "copy": lambda L: (lambda x: copy.copy(x).data_ptr() == x.data_ptr())(L.ones(2)),
    "H": lambda L: L.arange(6.0).reshape(2, 3).H.shape,
    "mH": lambda L: L.ones(2, 3, 4).mH.shape,
    "H1": lambda L: L.ones(3).H,
    "T0": lambda L: L.tensor(2.0).T,
    "len_shape0": lambda L: len(L.ones(0, 2)),
    "iter_empty": lambda L: list(L.ones(0, 2)),
    "bool_1elem_2d": lambda L: bool(L.zeros(1, 1)),
    "int_bool": lambda L: int(L.tensor(True)),
    "float_int": lambda L: float(L.tensor(3)),
    "index_u8": lambda L: [1, 2, 3][L.tensor(1, dtype=L.uint8)],
    "index_2d": lambda L: [1, 2, 3][L.tensor([[1]])],
    "range_tensor": lambda L: list(range(L.tensor(3))),
    "hex": lambda L: hex(L.tensor(10)),
    "round": lambda L: round(L.tensor(2.567), 1),
    "requires_grad_nonfloat_false": lambda L: setattr(L.ones(2, dtype=L.int64), "requires_grad", False),
    "grad_set_bad": lambda L: setattr(L.ones(2, requires_grad=True), "grad", L.ones(3)),
    "grad_set_dtype": lambda L: setattr(L.ones(2, requires_grad=True), "grad", L.ones(2, dtype=L.float64)),
    "grad_set_notensor": lambda L: setattr(L.ones(2, requires_grad=True), "grad", 3),
    "retain_grad_int": lambda L: L.ones(2).retain_grad(),
    "element_size_f16": lambda L: L.ones(1, dtype=L.float16).element_size(),
    "numpy_shares": lambda L: (lambda x: x.numpy().__array_interface__['data'][0] == x.data_ptr())(L.ones(3)),
    "numpy_nonleaf_rg": lambda L: (L.ones(2, requires_grad=True) * 2).numpy(),
    "array_nograd_detach": lambda L: np.asarray((L.ones(2, requires_grad=True) * 2).detach()).tolist(),
    "tolist_nan": lambda L: L.tensor([float("nan")]).tolist()[0] != L.tensor([float("nan")]).tolist()[0],
    "item_requires_grad": lambda L: L.tensor([1.5], requires_grad=True).item(),
    "tolist_rg": lambda L: L.tensor([1.5], requires_grad=True).tolist(),
    "data_set": lambda L: (lambda x: (setattr(x, "data", L.ones(3, dtype=L.float64)), x.dtype, x.shape)[1:])(
        L.ones(2, requires_grad=True)
    ),
    "data_set_bad": lambda L: setattr(L.ones(2), "data", [1]),
    "numel_0d": lambda L: L.tensor(3.0).numel(),
    "dim_0d": lambda L: L.tensor(3.0).dim(),
    "is_leaf_detached": lambda L: (L.ones(2, requires_grad=True) * 2).detach().is_leaf,
    "nbytes0": lambda L: L.ones(0).nbytes,
    "is_floating": lambda L: L.ones(2, dtype=L.float16).is_floating_point(),
    "is_signed": lambda L: (L.ones(1, dtype=L.uint8).is_signed(), L.ones(1).is_signed()),
    "dtype_attr_int": lambda L: L.tensor(1).dtype,
    "contiguous_self": lambda L: (lambda x: x.contiguous() is x)(L.ones(2, 2)),
    "contiguous_t": lambda L: (lambda x: x.t().contiguous().is_contiguous())(L.ones(2, 3)),
}


def _outcome(f, lib):
    """repr of ``f(lib)`` with the library name neutralised, or the exception type and first sentence."""
    try:
        return repr(f(lib)).replace("torch", "LIB").replace("ember", "LIB")
    except Exception as e:  # noqa: BLE001 - compared with torch's
        return f"{type(e).__name__}: {str(e).split(chr(10))[0].split('. ')[0]}"


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize("name", sorted(CASES))
def test_same_as_torch(name):
    assert _outcome(CASES[name], ember) == _outcome(CASES[name], torch)


def test_from_numpy_numpy_roundtrip_shares_memory():
    x = ember.zeros(3)
    n = x.numpy()
    n[0] = 5
    assert x[0].item() == 5
    assert np.shares_memory(np.asarray(x), n)


def test_detach_shares_memory_and_version():
    x = ember.ones(3, requires_grad=True)
    y = x * 2
    d = y.detach()
    d[0] = 7
    assert y[0].item() == 7
    assert d._version == y._version == 1
    z = x.data
    z[1] = 4
    assert x[1].item() == 4 and x._version == 0  # .data does not share the version counter


def test_clone_is_a_copy_with_grad():
    for lib in (ember, torch):
        x = lib.ones(3, requires_grad=True)
        c = x.clone()
        c.sum().backward()
        assert x.grad.tolist() == [1.0, 1.0, 1.0]
        with lib.no_grad():
            c[0] = 5
        assert x[0].item() == 1


def test_iteration_under_grad_keeps_graph():
    for lib in (ember, torch):
        x = lib.arange(6.0).reshape(2, 3).requires_grad_()
        rows = list(x)
        assert rows[0].grad_fn is not None
        sum(r.sum() for r in rows).backward()
        assert x.grad.tolist() == [[1.0] * 3] * 2


@pytest.mark.parametrize("name", sorted(__import__("ember._methods", fromlist=["_OPERATORS"])._OPERATORS))
def test_operator_keywords_as_torch(name: str) -> None:
    """Python's operators called as methods with a keyword: torch's parameter names (``__pow__`` takes exponent)."""
    keyword = "exponent" if name == "__pow__" else "other"
    same_outcome(lambda lib: getattr(lib.tensor([2, 3]), name)(**{keyword: 2}).tolist())
