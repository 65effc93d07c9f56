"""ember.save / ember.load against real torch.save / torch.load(weights_only=True)."""
from __future__ import annotations

import collections
import io
import mmap
import os
import pickle
import zipfile

import numpy as np
import pytest
import torch
from hypothesis import given, settings, strategies as st

import ember
from ember import serialization

DTYPES = ["float16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8", "bool", "complex64",
          "complex128"]


def _array(dtype: str, shape, seed=0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if dtype == "bool":
        return rng.random(shape) > 0.5
    if dtype.startswith("float"):
        return (rng.standard_normal(shape) * 10).astype(dtype)
    if dtype.startswith("complex"):
        return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)
    info = np.iinfo(dtype)
    return rng.integers(info.min, info.max, size=shape, endpoint=True, dtype=dtype)


def _same(e, t) -> None:
    """A loaded tensor (ember or torch) equals a torch tensor: dtype, shape, values, requires_grad."""
    assert isinstance(e, (ember.Tensor, torch.Tensor)) and isinstance(t, torch.Tensor)
    assert str(e.dtype) == str(t.dtype)
    assert tuple(e.shape) == tuple(t.shape)
    assert e.requires_grad == t.requires_grad
    np.testing.assert_array_equal(e.detach().resolve_conj().resolve_neg().numpy(),
                                  t.detach().resolve_conj().resolve_neg().numpy())


def _same_tree(e, t) -> None:
    if isinstance(t, torch.Tensor):
        _same(e, t)
    elif isinstance(t, dict):
        assert type(e) is type(t) and list(e) == list(t)
        for k in t:
            _same_tree(e[k], t[k])
    elif isinstance(t, (list, tuple)):
        assert type(e) is type(t) and len(e) == len(t)
        for a, b in zip(e, t):
            _same_tree(a, b)
    else:
        assert type(e) is type(t) and e == t


def _to_bytes(save, obj) -> io.BytesIO:
    buf = io.BytesIO()
    save(obj, buf)
    buf.seek(0)
    return buf


# --------------------------------------------------------------------------- dtypes, shapes


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(), (0,), (3, 0), (5,), (2, 3, 4)])
def test_each_dtype_both_ways(dtype, shape, tmp_path):
    arr = _array(dtype, shape)
    ember.save(ember.tensor(arr), tmp_path / "e.pt")
    _same(ember.tensor(arr), torch.load(tmp_path / "e.pt", weights_only=True))
    torch.save(torch.tensor(arr), tmp_path / "t.pt")
    _same(ember.load(tmp_path / "t.pt"), torch.tensor(arr))


def test_requires_grad_kept(tmp_path):
    x = ember.randn(3, requires_grad=True)
    y = x * 2  # a non-leaf: saved as a tensor that requires grad, as torch does
    ember.save({"x": x, "y": y}, tmp_path / "e.pt")
    got = torch.load(tmp_path / "e.pt", weights_only=True)
    assert got["x"].requires_grad and got["y"].requires_grad and got["y"].is_leaf
    back = ember.load(tmp_path / "e.pt")
    assert back["x"].requires_grad and back["x"].is_leaf
    np.testing.assert_array_equal(back["y"].detach().numpy(), y.detach().numpy())


def test_parameter_saved_by_torch_loads_requiring_grad(tmp_path):
    p = torch.nn.Parameter(torch.randn(2, 3))
    q = torch.nn.Parameter(torch.randn(2), requires_grad=False)
    torch.save({"p": p, "q": q}, tmp_path / "t.pt")
    got = ember.load(tmp_path / "t.pt")
    _same(got["p"], p)
    _same(got["q"], q)


# --------------------------------------------------------------------------- views and shared storages

VIEWS = {
    "transpose": lambda lib, a: a.t(),
    "slice": lambda lib, a: a[1:, 2:],
    "step": lambda lib, a: a[:, ::2],
    "row": lambda lib, a: a[2],
    "expand": lambda lib, a: a[:1].expand(3, 4),
    "permute3d": lambda lib, a: a.reshape(2, 3, 2).permute(2, 0, 1),
}


@pytest.mark.parametrize("view", list(VIEWS))
def test_views_keep_layout_and_share_storage_ember_to_torch(view, tmp_path):
    arr = _array("float32", (3, 4))
    e_base, t_base = ember.tensor(arr), torch.tensor(arr)
    e_view, t_view = VIEWS[view](ember, e_base), VIEWS[view](torch, t_base)
    ember.save({"base": e_base, "view": e_view}, tmp_path / "e.pt")
    got = torch.load(tmp_path / "e.pt", weights_only=True)
    _same(e_view, got["view"])
    assert got["view"].stride() == t_view.stride()
    assert got["view"].storage_offset() == t_view.storage_offset()
    assert got["view"].untyped_storage().data_ptr() == got["base"].untyped_storage().data_ptr()
    with zipfile.ZipFile(tmp_path / "e.pt") as zf:
        assert [n for n in zf.namelist() if "/data/" in n] == ["e/data/0"]


@pytest.mark.parametrize("view", list(VIEWS))
def test_views_keep_layout_and_share_storage_torch_to_ember(view, tmp_path):
    arr = _array("float64", (3, 4))
    t_base = torch.tensor(arr)
    t_view = VIEWS[view](torch, t_base)
    torch.save({"base": t_base, "view": t_view}, tmp_path / "t.pt")
    got = ember.load(tmp_path / "t.pt")
    _same(got["view"], t_view)
    assert got["view"].stride() == t_view.stride()
    assert got["view"].storage_offset() == t_view.storage_offset()
    assert np.shares_memory(got["view"].numpy(), got["base"].numpy())
    # Saving again keeps the sharing and the layout.
    ember.save(got, tmp_path / "e.pt")
    again = torch.load(tmp_path / "e.pt", weights_only=True)
    assert again["view"].stride() == t_view.stride()
    assert again["view"].storage_offset() == t_view.storage_offset()
    assert again["view"].untyped_storage().data_ptr() == again["base"].untyped_storage().data_ptr()


def test_view_saved_alone_round_trips(tmp_path):
    a = ember.arange(24, dtype=ember.int32).reshape(4, 6)
    v = a[1:3, ::3]
    ember.save(v, tmp_path / "v.pt")
    t = torch.load(tmp_path / "v.pt", weights_only=True)
    np.testing.assert_array_equal(t.numpy(), v.numpy())
    np.testing.assert_array_equal(ember.load(tmp_path / "v.pt").numpy(), v.numpy())


def test_same_tensor_twice_is_one_object(tmp_path):
    x = ember.ones(2)
    ember.save([x, x], tmp_path / "e.pt")
    a, b = torch.load(tmp_path / "e.pt", weights_only=True)
    assert a is b
    t = torch.ones(2)
    torch.save([t, t], tmp_path / "t.pt")
    a, b = ember.load(tmp_path / "t.pt")
    assert a is b


@settings(max_examples=25, deadline=None)
@given(shape=st.lists(st.integers(0, 4), min_size=0, max_size=4), dtype=st.sampled_from(DTYPES),
       seed=st.integers(0, 2**16), transpose=st.booleans())
def test_random_tensors_round_trip(shape, dtype, seed, transpose):
    arr = _array(dtype, tuple(shape), seed)
    e = ember.tensor(arr)
    t = torch.tensor(arr)
    if transpose and len(shape) >= 2:
        e, t = e.transpose(0, -1), t.transpose(0, -1)
    got = torch.load(_to_bytes(ember.save, e), weights_only=True)
    _same(e, got)
    _same(ember.load(_to_bytes(torch.save, t)), t)
    _same(ember.load(_to_bytes(ember.save, e)), t)


# --------------------------------------------------------------------------- containers and plain values


def _nested(lib):
    return {
        "tensors": [lib.tensor([1.0, 2.0]), (lib.tensor(3), lib.zeros(2, 2, dtype=lib.float16))],
        "od": collections.OrderedDict([("b", lib.tensor([True])), ("a", 1)]),
        "plain": [0, -1, 255, 65536, -(2**31), 2**40, 2**80, -(2**70), 1.5, float("inf"), "héllo", "", True,
                  False, None, (), (1,), (1, 2, 3, 4), b"\x00\xffab"],
        "more": {1: "int key", (1, 2): "tuple key", "set": {1, 2, 3}, "complex": 1 + 2j},
        "meta": [lib.float64, lib.int8, lib.bool, lib.Size([2, 3]), lib.device("cpu")],
    }


def _same_meta(e, t) -> None:
    assert [str(x) for x in e] == [str(x) for x in t]


def test_nested_containers_ember_to_torch(tmp_path):
    ember.save(_nested(ember), tmp_path / "e.pt")
    got = torch.load(tmp_path / "e.pt", weights_only=True)
    want = _nested(torch)
    assert got.pop("meta") == want.pop("meta")
    _same_tree(got, want)
    back = ember.load(tmp_path / "e.pt")
    _same_meta(back.pop("meta"), _nested(torch)["meta"])
    _same_tree(back, want)


def test_nested_containers_torch_to_ember(tmp_path):
    torch.save(_nested(torch), tmp_path / "t.pt")
    got = ember.load(tmp_path / "t.pt")
    want = _nested(torch)
    _same_meta(got.pop("meta"), want.pop("meta"))
    _same_tree(got, want)


def test_meta_objects_load_as_ember_objects(tmp_path):
    torch.save([torch.float16, torch.Size([2, 3]), torch.device("cpu")], tmp_path / "t.pt")
    dt, size, dev = ember.load(tmp_path / "t.pt")
    assert dt is ember.float16
    assert isinstance(size, ember.Size) and size == (2, 3)
    assert dev == ember.device("cpu")
    ember.save([ember.float16, ember.Size([2, 3]), ember.device("cpu")], tmp_path / "e.pt")
    assert torch.load(tmp_path / "e.pt", weights_only=True) == [torch.float16, torch.Size([2, 3]),
                                                                 torch.device("cpu")]


def test_numpy_scalars_are_saved_as_python_numbers():
    got = torch.load(_to_bytes(ember.save, [np.float32(1.5), np.int64(3), np.bool_(True)]), weights_only=True)
    assert got == [1.5, 3, True] and [type(x) for x in got] == [float, int, bool]


def test_empty_bytes_load_in_torch():  # torch.save writes b"" with a global its own loader refuses
    assert torch.load(_to_bytes(ember.save, [b""]), weights_only=True) == [b""]


def test_unsupported_object_is_a_clear_type_error():
    with pytest.raises(TypeError, match="cannot save an object of type .*Thing"):
        ember.save({"x": type("Thing", (), {})()}, io.BytesIO())


def test_recursive_list_round_trips():
    lst: list = [ember.ones(1)]
    lst.append(lst)
    tup = (lst,)
    lst.append(tup)
    got = torch.load(_to_bytes(ember.save, lst), weights_only=True)
    assert got[1] is got and got[2][0] is got
    back = ember.load(_to_bytes(ember.save, lst))
    assert back[1] is back and back[2][0] is back


# --------------------------------------------------------------------------- models and optimizers


def _trained_torch_model():
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Tanh(), torch.nn.Linear(4, 2))
    opt = torch.optim.Adam(model.parameters(), lr=0.01)
    for _ in range(3):
        opt.zero_grad()
        model(torch.randn(5, 3)).pow(2).sum().backward()
        opt.step()
    return model, opt


def test_model_state_dict_torch_to_ember_to_torch(tmp_path):
    model, _ = _trained_torch_model()
    torch.save(model.state_dict(), tmp_path / "t.pt")
    sd = ember.load(tmp_path / "t.pt")
    assert isinstance(sd, collections.OrderedDict)
    _same_tree(sd, model.state_dict())
    ember.save(sd, tmp_path / "e.pt")
    fresh = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Tanh(), torch.nn.Linear(4, 2))
    fresh.load_state_dict(torch.load(tmp_path / "e.pt", weights_only=True))
    x = torch.randn(4, 3)
    torch.testing.assert_close(fresh(x), model(x), rtol=0, atol=0)


def test_state_dict_metadata_survives(tmp_path):
    model, _ = _trained_torch_model()
    torch.save(model.state_dict(), tmp_path / "t.pt")
    sd = ember.load(tmp_path / "t.pt")
    assert sd._metadata == model.state_dict()._metadata
    ember.save(sd, tmp_path / "e.pt")
    assert torch.load(tmp_path / "e.pt", weights_only=True)._metadata == model.state_dict()._metadata


def test_adam_state_dict_round_trip_resumes_identically(tmp_path):
    model, opt = _trained_torch_model()
    torch.save({"model": model.state_dict(), "opt": opt.state_dict()}, tmp_path / "t.pt")
    ck = ember.load(tmp_path / "t.pt")
    _same_tree(ck["opt"], opt.state_dict())
    assert ck["opt"]["param_groups"][0]["betas"] == (0.9, 0.999)
    ember.save(ck, tmp_path / "e.pt")
    ck2 = torch.load(tmp_path / "e.pt", weights_only=True)
    model2 = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Tanh(), torch.nn.Linear(4, 2))
    model2.load_state_dict(ck2["model"])
    opt2 = torch.optim.Adam(model2.parameters(), lr=0.01)
    opt2.load_state_dict(ck2["opt"])
    x = torch.randn(5, 3)
    for m, o in ((model, opt), (model2, opt2)):
        o.zero_grad()
        m(x).pow(2).sum().backward()
        o.step()
    for a, b in zip(model.parameters(), model2.parameters()):
        torch.testing.assert_close(a, b, rtol=0, atol=0)


# --------------------------------------------------------------------------- files


def test_file_objects_both_ways():
    x = ember.randn(2, 3)
    got = torch.load(_to_bytes(ember.save, {"x": x}), weights_only=True)
    _same(x, got["x"])
    t = torch.randn(4)
    _same(ember.load(_to_bytes(torch.save, t)), t)


def test_non_seekable_output_stream():
    class Sink:
        def __init__(self):
            self.buf = io.BytesIO()

        def write(self, b):
            return self.buf.write(b)

        def flush(self):
            pass

    sink = Sink()
    x = ember.arange(6, dtype=ember.float64)
    ember.save(x, sink)
    _same(x, torch.load(io.BytesIO(sink.buf.getvalue()), weights_only=True))


def test_archive_layout_matches_torch(tmp_path):
    ember.save({"w": ember.ones(3)}, tmp_path / "model.pt")
    torch.save({"w": torch.ones(3)}, tmp_path / "ref.pt")
    with zipfile.ZipFile(tmp_path / "model.pt") as ours, zipfile.ZipFile(tmp_path / "ref.pt") as ref:
        assert [n.replace("model/", "") for n in ours.namelist()] == [n.replace("ref/", "")
                                                                       for n in ref.namelist()]
        for rec in ("version", "byteorder", ".format_version", ".storage_alignment"):
            assert ours.read(f"model/{rec}") == ref.read(f"ref/{rec}")
        for info in ours.infolist():
            assert info.compress_type == zipfile.ZIP_STORED


def test_records_are_aligned_so_torch_can_mmap(tmp_path):
    x = {"a": ember.randn(3, 5), "b": ember.arange(7), "c": ember.tensor([True, False, True])}
    ember.save(x, tmp_path / "e.pt")
    got = torch.load(tmp_path / "e.pt", weights_only=True, mmap=True)
    for k in x:
        _same(x[k], got[k])


@pytest.mark.parametrize("writer", ["ember", "torch"])
def test_mmap_load_views_the_file_copy_on_write(writer, tmp_path):
    arrays = {"a": _array("float32", (3, 5)), "b": _array("int64", (7,)), "e": _array("float16", (0, 2)),
              "z": _array("bool", ())}
    lib = ember if writer == "ember" else torch
    lib.save({k: lib.tensor(v) for k, v in arrays.items()}, tmp_path / "m.pt")
    before = (tmp_path / "m.pt").read_bytes()
    got = ember.load(tmp_path / "m.pt", mmap=True)
    for k, v in arrays.items():
        _same(got[k], torch.tensor(v))
    root = got["a"].numpy()
    while isinstance(root, np.ndarray):
        root = root.base
    assert isinstance(getattr(root, "obj", root), mmap.mmap)  # a view of the mapped file, not a copy
    got["a"].add_(1.0)  # private mapping: the file does not change
    np.testing.assert_array_equal(got["a"].numpy(), arrays["a"] + 1)
    assert (tmp_path / "m.pt").read_bytes() == before
    with pytest.raises(ValueError, match="file path"):
        ember.load(io.BytesIO(before), mmap=True)


def test_saving_through_a_symlink_writes_its_target(tmp_path):
    (tmp_path / "real.pt").write_bytes(b"old")
    os.symlink(tmp_path / "real.pt", tmp_path / "link.pt")
    ember.save(ember.ones(2), tmp_path / "link.pt")
    assert os.path.islink(tmp_path / "link.pt")
    _same(ember.load(tmp_path / "real.pt"), torch.ones(2))


def test_atomic_write_keeps_previous_file_when_pickling_fails(tmp_path):
    path = tmp_path / "ck.pt"
    ember.save({"w": ember.ones(2)}, path)
    before = path.read_bytes()
    with pytest.raises(TypeError):
        ember.save({"w": ember.zeros(2), "bad": object()}, path)
    assert path.read_bytes() == before
    assert os.listdir(tmp_path) == ["ck.pt"]


def test_atomic_write_keeps_previous_file_when_writing_fails(tmp_path, monkeypatch):
    path = tmp_path / "ck.pt"
    ember.save({"w": ember.ones(2)}, str(path))
    before = path.read_bytes()
    calls = []
    real = serialization._zip_entry

    def failing(zf, name, data):
        calls.append(name)
        if "/data/" in name:
            raise OSError("disk full")
        real(zf, name, data)

    monkeypatch.setattr(serialization, "_zip_entry", failing)
    with pytest.raises(OSError, match="disk full"):
        ember.save({"w": ember.zeros(1000)}, path)
    assert len(calls) > 1  # the failure happened part-way through the archive
    assert path.read_bytes() == before
    assert os.listdir(tmp_path) == ["ck.pt"]
    monkeypatch.undo()
    _same(ember.load(path)["w"], torch.ones(2))


def test_not_a_zip_file_is_a_clear_error(tmp_path):
    (tmp_path / "x.pt").write_bytes(pickle.dumps([1, 2]))
    with pytest.raises(RuntimeError, match="zip"):
        ember.load(tmp_path / "x.pt")


# --------------------------------------------------------------------------- safety


def _archive_with_pickle(path, payload: bytes) -> None:
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("archive/data.pkl", payload)
        zf.writestr("archive/byteorder", "little")
        zf.writestr("archive/version", "3\n")


class _System:
    def __init__(self, cmd):
        self.cmd = cmd

    def __reduce__(self):
        return (os.system, (self.cmd,))


@pytest.mark.parametrize("attack", ["os.system", "eval", "exec"])
def test_malicious_pickle_is_refused_without_side_effect(attack, tmp_path):
    marker = tmp_path / "pwned"
    path = tmp_path / "evil.pt"
    if attack == "os.system":
        torch.save({"w": torch.ones(2), "x": _System(f"touch {marker}")}, path)
    else:
        code = f"open({str(marker)!r}, 'w').close()"
        payload = f"cbuiltins\n{attack}\n(V{code}\ntR.".encode()
        _archive_with_pickle(path, payload)
    with pytest.raises(pickle.UnpicklingError, match=r"(?s)Weights only load failed.*GLOBAL (posix|os|builtins)\."):
        ember.load(path)
    assert not marker.exists()
    # The payload is live: an unrestricted unpickler runs it.
    if attack == "os.system":
        torch.load(path, weights_only=False)
    else:
        with zipfile.ZipFile(path) as zf:
            pickle.loads(zf.read("archive/data.pkl"))
    assert marker.exists()


@pytest.mark.parametrize("target", ["ctorch\nfloat32\n", "ctorch\nFloatStorage\n", "ccollections\nCounter\n",
                                    "ctorch._utils\n_rebuild_tensor_v2\n"])
def test_build_cannot_alter_shared_objects(target, tmp_path):
    # (None, {"is_signed": False, "dtype": None, "__defaults__": None}) set on a shared global by BUILD
    state = "(N}(Vis_signed\nI00\nVdtype\nNV__defaults__\nNutb"
    _archive_with_pickle(tmp_path / "evil.pt", f"{target}{state}.".encode())
    snapshot = (ember.float32.is_signed, serialization._ALLOWED["torch", "FloatStorage"].dtype,
                serialization._rebuild_tensor_v2.__defaults__, vars(collections.Counter).copy())
    with pytest.raises(pickle.UnpicklingError, match="BUILD"):
        ember.load(tmp_path / "evil.pt")
    assert snapshot == (ember.float32.is_signed, serialization._ALLOWED["torch", "FloatStorage"].dtype,
                        serialization._rebuild_tensor_v2.__defaults__, vars(collections.Counter).copy())
    _same(ember.load(_to_bytes(torch.save, torch.ones(2))), torch.ones(2))


@pytest.mark.parametrize("payload", [b"ccollections\nOrderedDict\n)\x81.", b"(ccollections\nOrderedDict\no."])
def test_instance_opcodes_are_checked(payload, tmp_path):
    _archive_with_pickle(tmp_path / "p.pt", b"\x80\x02" + payload)
    if payload.endswith(b"\x81."):  # NEWOBJ of an allowed class is plain data
        assert ember.load(tmp_path / "p.pt") == collections.OrderedDict()
    else:
        with pytest.raises(pickle.UnpicklingError, match="OBJ"):
            ember.load(tmp_path / "p.pt")


def test_whole_module_is_refused_with_state_dict_hint(tmp_path):
    torch.save(torch.nn.Linear(2, 2), tmp_path / "lin.pt")
    with pytest.raises(pickle.UnpicklingError, match=r"torch\.nn\.modules\.linear\.Linear.*state_dict"):
        ember.load(tmp_path / "lin.pt")


def test_weights_only_false_is_refused(tmp_path):
    ember.save(ember.ones(1), tmp_path / "e.pt")
    with pytest.raises(ValueError, match="weights_only=False.*run"):
        ember.load(tmp_path / "e.pt", weights_only=False)


def _edit_pickle(src, dst, old: bytes, new: bytes) -> None:
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w") as zout:
        for info in zin.infolist():
            data = zin.read(info)
            if info.filename.endswith("data.pkl"):
                assert old in data
                data = data.replace(old, new)
            zout.writestr(info.filename, data)


def test_out_of_bounds_view_is_refused(tmp_path):
    torch.save(torch.arange(4.0), tmp_path / "t.pt")
    # size (4,) -> (9,): the view would read past the storage's 4 elements
    _edit_pickle(tmp_path / "t.pt", tmp_path / "bad.pt", b"K\x00K\x04\x85", b"K\x00K\x09\x85")
    with pytest.raises(RuntimeError):
        torch.load(tmp_path / "bad.pt", weights_only=True)
    with pytest.raises(RuntimeError, match="storage"):
        ember.load(tmp_path / "bad.pt")


def test_storages_saved_elsewhere_need_map_location(tmp_path):
    torch.save({"w": torch.arange(3.0)}, tmp_path / "t.pt")
    _edit_pickle(tmp_path / "t.pt", tmp_path / "m.pt", b"X\x03\x00\x00\x00cpu", b"X\x03\x00\x00\x00mps")
    with pytest.raises(RuntimeError, match="map_location"):
        ember.load(tmp_path / "m.pt")
    for loc in ("cpu", ember.device("cpu"), torch.device("cpu"), {"mps": "cpu"}):
        _same(ember.load(tmp_path / "m.pt", map_location=loc)["w"], torch.arange(3.0))


def _bits(t):
    """A bfloat16 tensor of either library as its raw 16-bit patterns."""
    return t.detach().view(torch.int16).numpy() if isinstance(t, torch.Tensor) else t.detach().numpy().view(np.int16)


def test_bfloat16_round_trips_with_torch(tmp_path):
    """torch-written bfloat16 loads as bfloat16 (bit for bit, strides and sharing kept); ember-written loads in torch
    as bfloat16."""
    base = torch.randn(4, 6).bfloat16()
    sd = {"w": base, "view": base[1:, ::2].t(), "f": torch.ones(2), "p": torch.nn.Parameter(base[0].clone())}
    torch.save(sd, tmp_path / "t.pt")
    got = ember.load(tmp_path / "t.pt")
    for k, v in sd.items():
        assert got[k].dtype is ember.bfloat16 or k == "f"
        assert tuple(got[k].shape) == tuple(v.shape) and got[k].stride() == v.stride()
        if v.dtype == torch.bfloat16:
            np.testing.assert_array_equal(_bits(got[k]), _bits(v))
    assert isinstance(got["p"], ember.nn.Parameter)
    with ember.no_grad():
        got["w"][1, 0] = 7.0  # the view shares the loaded storage, as torch's
    assert got["view"][0, 0].item() == 7.0
    ember.save(got, tmp_path / "e.pt")
    back = torch.load(tmp_path / "e.pt", weights_only=True)
    for k in sd:
        assert str(back[k].dtype) == str(got[k].dtype)
        np.testing.assert_array_equal(_bits(back[k]) if back[k].dtype == torch.bfloat16 else back[k].numpy(),
                                      _bits(got[k]) if got[k].dtype is ember.bfloat16 else got[k].numpy())
    mm = ember.load(tmp_path / "t.pt", mmap=True)
    np.testing.assert_array_equal(_bits(mm["w"]), _bits(base))


def test_bfloat16_module_state_dict(tmp_path):
    m = torch.nn.Linear(3, 2).bfloat16()
    torch.save(m.state_dict(), tmp_path / "m.pt")
    e = ember.nn.Linear(3, 2).bfloat16()
    e.load_state_dict(ember.load(tmp_path / "m.pt"))
    assert e.weight.dtype is ember.bfloat16
    x = np.random.default_rng(0).standard_normal((4, 3)).astype(np.float32)
    np.testing.assert_array_equal(_bits(e(ember.tensor(x).bfloat16())), _bits(m(torch.tensor(x).bfloat16())))


def test_bfloat16_safetensors_round_trip(tmp_path):
    from safetensors.torch import load_file as tload, save_file as tsave

    from ember.utils.safetensors import load, load_file, save, save_file

    t = {"w": torch.randn(3, 4).bfloat16(), "i": torch.arange(3), "h": torch.ones(2).half()}
    tsave(t, tmp_path / "t.safetensors")
    got = load_file(tmp_path / "t.safetensors")
    assert got["w"].dtype is ember.bfloat16 and got["i"].dtype is ember.int64 and got["h"].dtype is ember.float16
    np.testing.assert_array_equal(_bits(got["w"]), _bits(t["w"]))
    save_file(got, tmp_path / "e.safetensors")
    back = tload(tmp_path / "e.safetensors")
    assert back["w"].dtype == torch.bfloat16 and torch.equal(back["w"], t["w"]) and torch.equal(back["i"], t["i"])
    again = load(save(got))
    np.testing.assert_array_equal(_bits(again["w"]), _bits(t["w"]))


# --------------------------------------------------------------------------- the seed's pattern


def test_saved_tensors_hooks_offload_to_disk_gives_same_gradients(tmp_path):
    arrays = [np.random.default_rng(1).standard_normal((4, 5)), np.random.default_rng(2).standard_normal((5, 3))]
    counter = iter(range(10**6))

    def pack(t):
        name = tmp_path / f"saved_{next(counter)}.pt"
        ember.save(t, name)
        return name

    def unpack(name):
        return ember.load(name)

    def run(lib, hooks):
        a, b = (lib.tensor(x, requires_grad=True) for x in arrays)
        if hooks:
            with lib.autograd.graph.saved_tensors_hooks(pack, unpack):
                out = (a.tanh() @ b).exp().sum()
        else:
            out = (a.tanh() @ b).exp().sum()
        out.backward()
        return a.grad, b.grad

    with_hooks = run(ember, True)
    assert next(counter) > 0  # the hooks did run and wrote files
    without = run(ember, False)
    reference = run(torch, False)
    for h, w, r in zip(with_hooks, without, reference):
        np.testing.assert_array_equal(h.numpy(), w.numpy())
        np.testing.assert_allclose(h.numpy(), r.numpy(), rtol=1e-12)


def _parameter(arr: np.ndarray, requires_grad: bool):
    """ember.nn.Parameter when the nn layer exists, else a stand-in subclass of the same name."""
    try:
        from ember.nn import Parameter
    except ImportError:
        from ember._tensor import _init

        class Parameter(ember.Tensor):
            __slots__ = ()

        p = Parameter.__new__(Parameter)
        _init(p, arr, ember.tensor(arr).dtype, requires_grad)
        return p
    return Parameter(ember.tensor(arr), requires_grad)


def test_torch_tensors_with_python_attributes_load(tmp_path):
    # torch writes these through _rebuild_from_type_v2 / _rebuild_parameter_with_state
    t = torch.randn(2)
    t.foo = 1
    p = torch.nn.Parameter(torch.randn(3))
    p.bar = 2
    torch.save([t, p], tmp_path / "t.pt")
    a, b = ember.load(tmp_path / "t.pt")
    _same(a, t)
    _same(b, p)


@pytest.mark.parametrize("requires_grad", [True, False])
def test_parameters_save_as_torch_parameters(requires_grad, tmp_path):
    arr = _array("float32", (2, 3))
    ember.save({"w": _parameter(arr, requires_grad)}, tmp_path / "e.pt")
    got = torch.load(tmp_path / "e.pt", weights_only=True)["w"]
    assert type(got) is torch.nn.Parameter
    _same(got, torch.nn.Parameter(torch.tensor(arr), requires_grad))
    back = ember.load(tmp_path / "e.pt")["w"]
    _same(back, got)


# --------------------------------------------------------------------------- complex tensors


def test_complex_views_and_conjugates_torch_to_ember(tmp_path):
    """torch writes a conjugate (or negative) view as its storage plus a metadata flag: ember loads the values the
    view reads, with the conjugate bit set."""
    z = torch.tensor(_array("complex128", (2, 3)))
    saved = {"z": z, "conj": z.conj(), "slice of conj": z.conj()[:, 1:]}
    torch.save(saved, tmp_path / "t.pt")
    got = ember.load(tmp_path / "t.pt")
    for k, t in saved.items():
        _same(got[k], t)
    assert got["conj"].is_conj() and not got["z"].is_conj()
    for real_view in (z.conj().imag, z.real, torch.view_as_real(z)):  # (torch saves no two types of one storage)
        torch.save(real_view, tmp_path / "v.pt")
        _same(ember.load(tmp_path / "v.pt"), real_view)


def test_complex_views_and_conjugates_ember_to_torch(tmp_path):
    z = ember.tensor(_array("complex64", (2, 3)))
    saved = {"z": z, "conj": z.conj(), "imag": z.imag, "as real": ember.view_as_real(z), "t": z.mT}
    ember.save(saved, tmp_path / "e.pt")
    got = torch.load(tmp_path / "e.pt", weights_only=True)
    for k, e in saved.items():
        assert str(got[k].dtype) == str(e.dtype) and tuple(got[k].shape) == tuple(e.shape)
        np.testing.assert_array_equal(got[k].numpy(), e.resolve_conj().numpy())


def _with_data_pkl(lib, path, payload) -> str:
    """A copy of a checkpoint saved by ``lib`` whose data.pkl record is replaced by ``payload`` (a valid zip)."""
    src = str(path) + ".src"
    lib.save({"w": lib.ones(3)}, src)
    out = str(path) + ".bad"
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as zout:
        for info in zin.infolist():
            data = zin.read(info.filename)
            zout.writestr(info, payload(data) if info.filename.endswith("data.pkl") else data)
    return out


@pytest.mark.parametrize("payload", [lambda d: b"_" * 40, lambda d: bytes(range(95, 200)),
                                     lambda d: b"\x80\x02" + b"_" * 40, lambda d: d[: len(d) // 2]],
                         ids=["underscores", "bytes", "protocol then garbage", "truncated"])
def test_a_garbage_pickle_raises_torchs_unpickling_error(tmp_path, payload):
    """The issue's checkpoint whose pickle is garbage: torch's "Weights only load failed" UnpicklingError, never the
    pure-Python unpickler's bare KeyError('95')."""
    for lib in (ember, torch):
        path = _with_data_pkl(lib, tmp_path / lib.__name__, payload)
        with pytest.raises(pickle.UnpicklingError, match="Weights only load failed"):
            lib.load(path)


def test_a_corrupted_record_raises_torchs_stream_reader_error(tmp_path):
    path = str(tmp_path / "ckpt")
    ember.save({"w": ember.arange(1000.0)}, path, _use_new_zipfile_serialization=True)
    data = bytearray(open(path, "rb").read())
    at = data.find(np.arange(1000.0, dtype=np.float32).tobytes()[:64])
    data[at + 8:at + 40] = b"\xff" * 32  # damages the storage's bytes, so its CRC no longer matches
    open(path, "wb").write(bytes(data))
    with pytest.raises(RuntimeError, match="PytorchStreamReader failed reading file .*invalid header or archive is "
                                           "corrupted"):
        ember.load(path)
