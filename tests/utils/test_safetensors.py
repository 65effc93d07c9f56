"""ember.utils.safetensors round-trips with torch's safetensors files."""
import numpy as np
import pytest
from safetensors.torch import load_file as torch_load_file, save_file as torch_save_file

from oracle import torch, ember

DTYPES = ["float32", "float64", "float16", "int64", "int32", "int16", "int8", "uint8", "bool"]


def _sample(lib):
    rng = np.random.default_rng(0)
    out = {}
    for d in DTYPES:
        a = rng.standard_normal((3, 4)) * 10
        out[f"t_{d}"] = lib.tensor(a.astype(d) if d != "bool" else a > 0)
    out["scalar"] = lib.tensor(np.float32(2.5))
    out["empty"] = lib.zeros(0, 3)
    return out


def test_ember_file_loads_in_torch_and_back(tmp_path):
    e = _sample(ember)
    ember.utils.safetensors.save_file(e, tmp_path / "a.safetensors", metadata={"format": "pt"})
    t = torch_load_file(str(tmp_path / "a.safetensors"))
    assert set(t) == set(e)
    for k in e:
        assert str(t[k].dtype) == str(e[k].dtype) and tuple(t[k].shape) == tuple(e[k].shape)
        np.testing.assert_array_equal(t[k].numpy(), e[k].numpy())
    torch_save_file(_sample(torch), str(tmp_path / "b.safetensors"))
    back = ember.utils.safetensors.load_file(tmp_path / "b.safetensors")
    for k, v in _sample(torch).items():
        assert str(back[k].dtype) == str(v.dtype)
        np.testing.assert_array_equal(back[k].numpy(), v.numpy())


def test_model_state_dict_round_trip(tmp_path):
    m = ember.nn.Sequential(ember.nn.Linear(3, 4), ember.nn.Linear(4, 2))
    ember.utils.safetensors.save_file(m.state_dict(), tmp_path / "m.safetensors")
    m2 = ember.nn.Sequential(ember.nn.Linear(3, 4), ember.nn.Linear(4, 2))
    m2.load_state_dict(ember.utils.safetensors.load_file(tmp_path / "m.safetensors"))
    for a, b in zip(m.parameters(), m2.parameters()):
        np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())


def test_non_tensor_value_is_refused(tmp_path):
    with pytest.raises(ValueError, match="expected torch.Tensor"):
        ember.utils.safetensors.save_file({"a": 1}, tmp_path / "x.safetensors")
    assert not list(tmp_path.iterdir())
