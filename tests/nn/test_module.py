"""nn.Module system against torch.nn: registries, state_dict, load errors, printing, hooks."""
import numpy as np
import pytest

from oracle import torch, ember, assert_close


def build(lib):
    nn = lib.nn

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 3)
            self.register_buffer("running", lib.zeros(3))
            self.register_buffer("scratch", lib.ones(2), persistent=False)
            self.scale = nn.Parameter(lib.ones(1))

        def forward(self, x):
            return self.fc(x) * self.scale + self.running

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.block = Block()
            self.layers = nn.ModuleList([nn.Linear(3, 3) for _ in range(3)])
            self.head = nn.Sequential(nn.Linear(3, 2), nn.Identity())
            self.shared = self.head[0]  # the same module twice

        def forward(self, x):
            x = self.block(x)
            for layer in self.layers:
                x = layer(x)
            return self.head(x)

    return Net()


def copy_params(src_torch, dst_ember):
    dst_ember.load_state_dict({k: v.detach().numpy() for k, v in src_torch.state_dict().items()})


def test_names_and_state_dict_keys_match_torch():
    t, e = build(torch), build(ember)
    assert [n for n, _ in e.named_parameters()] == [n for n, _ in t.named_parameters()]
    assert [n for n, _ in e.named_buffers()] == [n for n, _ in t.named_buffers()]
    assert list(e.state_dict().keys()) == list(t.state_dict().keys())
    assert [n for n, _ in e.named_modules()] == [n for n, _ in t.named_modules()]
    assert [n for n, _ in e.named_children()] == [n for n, _ in t.named_children()]
    assert len(list(e.parameters())) == len(list(t.parameters()))


def test_forward_backward_matches_torch_after_state_dict_copy():
    t, e = build(torch), build(ember)
    copy_params(t, e)
    x = np.random.default_rng(0).standard_normal((5, 4)).astype(np.float32)
    yt = t(torch.tensor(x)).pow(2).sum()
    ye = e(ember.tensor(x)).pow(2).sum()
    assert_close(ye, yt)
    yt.backward()
    ye.backward()
    gt = dict(t.named_parameters())
    for n, p in e.named_parameters():
        assert_close(p.grad, gt[n].grad, what=n)


def test_ember_state_dict_loads_into_torch():
    t, e = build(torch), build(ember)
    t.load_state_dict({k: torch.tensor(v.numpy()) for k, v in e.state_dict().items()})
    for (n, a), (m, b) in zip(e.state_dict().items(), t.state_dict().items()):
        assert n == m and np.array_equal(a.numpy(), b.numpy())


def test_printed_form_matches_torch():
    t, e = build(torch), build(ember)
    assert repr(e) == repr(t)
    assert repr(ember.nn.ModuleList([ember.nn.Linear(2, 2)] * 1 + [ember.nn.Identity()])) == \
        repr(torch.nn.ModuleList([torch.nn.Linear(2, 2)] * 1 + [torch.nn.Identity()]))


def test_parameter_printed_form_matches_torch():
    assert repr(ember.nn.Parameter(ember.tensor([1.0, 2.0]))) == repr(torch.nn.Parameter(torch.tensor([1.0, 2.0])))


@pytest.mark.parametrize("case", ["missing", "unexpected", "shape"])
def test_load_state_dict_errors_match_torch(case):
    msgs = []
    for lib in (ember, torch):
        m = lib.nn.Linear(2, 3)
        sd = {k: v.clone() for k, v in m.state_dict().items()}
        if case == "missing":
            del sd["bias"]
        elif case == "unexpected":
            sd["extra.weight"] = lib.zeros(1)
        else:
            sd["weight"] = lib.zeros(2, 2)
        with pytest.raises(RuntimeError) as ei:
            m.load_state_dict(sd)
        msgs.append(str(ei.value))
    assert msgs[0] == msgs[1]


def test_non_strict_load_returns_keys_like_torch():
    out = []
    for lib in (ember, torch):
        m = lib.nn.Linear(2, 3)
        r = m.load_state_dict({"weight": lib.zeros(3, 2), "foo": lib.zeros(1)}, strict=False)
        out.append((r.missing_keys, r.unexpected_keys))
    assert out[0] == out[1]


def test_setattr_routing_and_errors_match_torch():
    for lib in (ember, torch):
        m = lib.nn.Module()
        m.p = lib.nn.Parameter(lib.zeros(2))
        m.sub = lib.nn.Linear(1, 1)
        m.register_buffer("b", lib.zeros(1))
        assert "p" in m._parameters and "sub" in m._modules and "b" in m._buffers
        with pytest.raises(TypeError):
            m.p = lib.zeros(2)
        del m.p
        assert "p" not in m._parameters
    for lib in (ember, torch):
        m = lib.nn.Module()
        with pytest.raises(KeyError):
            m.register_parameter("a.b", None)


def test_train_eval_zero_grad_requires_grad():
    for lib in (ember, torch):
        m = build(lib)
        assert m.training and all(x.training for x in m.modules())
        m.eval()
        assert not any(x.training for x in m.modules())
        m(lib.ones(1, 4)).sum().backward()
        m.zero_grad()
        assert all(p.grad is None for p in m.parameters())
        m.requires_grad_(False)
        assert not any(p.requires_grad for p in m.parameters())


def test_to_double_converts_params_and_buffers():
    m = build(ember).double()
    assert all(p.dtype == ember.float64 for p in m.parameters())
    assert all(b.dtype == ember.float64 for b in m.buffers())
    assert isinstance(m.block.fc.weight, ember.nn.Parameter)


def test_forward_hooks_and_full_backward_hook_match_torch():
    x = np.random.default_rng(1).standard_normal((3, 4)).astype(np.float32)
    rec = {}
    t_state = None
    for lib in (torch, ember):
        lib.manual_seed(0)
        m = lib.nn.Linear(4, 2)
        if lib is ember:
            m.load_state_dict({k: v.detach().numpy() for k, v in t_state.items()})
        else:
            t_state = m.state_dict()
        seen = []
        m.register_forward_pre_hook(lambda mod, args: (args[0] * 2,))
        m.register_forward_hook(lambda mod, args, out: out + 1)
        m.register_full_backward_hook(lambda mod, gi, go: seen.append((gi, go)))
        xin = lib.tensor(x, requires_grad=True)
        y = m(xin)
        (y * y).sum().backward()
        rec[lib.__name__] = (y, xin.grad, seen[0])
    (ye, ge, (gie, goe)), (yt, gt, (git, got)) = rec["ember"], rec["torch"]
    assert_close(ye, yt)
    assert_close(ge, gt)
    assert_close(gie[0], git[0])
    assert_close(goe[0], got[0])


def test_parameters_are_leaves_and_deepcopy_keeps_type():
    import copy

    m = build(ember)
    m2 = copy.deepcopy(m)
    assert isinstance(m2.block.scale, ember.nn.Parameter) and m2.block.scale.is_leaf
    assert m2.block.scale is not m.block.scale
    assert m2.shared is m2.head[0]
