"""Printed form of every layer and of a realistic model, and state_dict exchange with torch, both ways."""
import io

import numpy as np
import pytest

from oracle import assert_close, ember, torch

# constructor calls, evaluated as ``lib.nn.<spec>``: defaults and non-default options of every layer family
LAYERS = [
    "Identity()", "Linear(3, 4)", "Linear(3, 4, bias=False)", "Bilinear(2, 3, 4)", "LazyLinear(5)",
    "Conv1d(2, 4, 3)", "Conv1d(2, 4, 3, stride=2, padding=1, dilation=2, groups=2, bias=False, padding_mode='reflect')",
    "Conv2d(3, 8, 3)", "Conv2d(3, 8, (3, 5), dilation=(2, 1), padding='same')", "Conv2d(4, 8, 3, padding='valid', groups=4)",
    "Conv2d(3, 8, 3, padding=(1, 2), padding_mode='circular')", "Conv2d(3, 8, 1, padding=0, dilation=1)",
    "ConvTranspose1d(2, 4, 3, stride=2, output_padding=1)", "ConvTranspose2d(3, 6, (2, 3))",
    "ConvTranspose2d(3, 6, 3, stride=2, padding=1, output_padding=1, groups=3, bias=False, dilation=1)",
    "MaxPool1d(2)", "MaxPool1d(3, stride=1, padding=1, dilation=2, return_indices=True, ceil_mode=True)",
    "MaxPool2d(2)", "MaxPool2d((2, 3), stride=1, padding=1, ceil_mode=True)", "AvgPool1d(3)", "AvgPool1d(3, 2, 1, True, False)",
    "AvgPool2d(2)", "AvgPool2d(3, stride=2, padding=1, ceil_mode=True, count_include_pad=False, divisor_override=2)",
    "AdaptiveAvgPool1d(4)", "AdaptiveAvgPool2d((1, 1))", "AdaptiveAvgPool2d(7)", "AdaptiveAvgPool2d((None, 3))",
    "AdaptiveMaxPool1d(2)", "AdaptiveMaxPool2d((2, 2), return_indices=True)",
    "ConstantPad1d(2, 3.5)", "ConstantPad2d((1, 2, 0, 1), 0.0)", "ConstantPad3d(1, -1)", "ZeroPad1d(2)",
    "ZeroPad2d((1, 1, 2, 0))", "ZeroPad3d(1)", "ReflectionPad1d(2)", "ReflectionPad2d((1, 2, 3, 4))", "ReflectionPad3d(1)",
    "ReplicationPad1d((1, 2))", "ReplicationPad2d(2)", "ReplicationPad3d(1)", "CircularPad1d(1)",
    "CircularPad2d((1, 0, 1, 0))", "CircularPad3d(1)",
    "Upsample(scale_factor=2)", "Upsample(size=(4, 5), mode='bilinear', align_corners=True)",
    "Upsample(scale_factor=2.0, mode='nearest')", "UpsamplingNearest2d(scale_factor=2)", "UpsamplingBilinear2d(size=8)",
    "PixelShuffle(2)", "PixelUnshuffle(3)", "Fold((4, 5), (2, 2))", "Unfold(2)",
    "Fold(output_size=6, kernel_size=3, dilation=1, padding=1, stride=2)", "Unfold((2, 3), dilation=2, padding=1, stride=(1, 2))",
    "ReLU()", "ReLU(inplace=True)", "ReLU6()", "ReLU6(True)", "LeakyReLU()", "LeakyReLU(0.2, inplace=True)", "PReLU()",
    "PReLU(3, init=0.1)", "ELU()", "ELU(alpha=0.5, inplace=True)", "SELU()", "SELU(inplace=True)", "CELU(2.0)", "GELU()",
    "GELU(approximate='tanh')", "SiLU()", "SiLU(inplace=True)", "Mish()", "Mish(inplace=True)", "Softplus()",
    "Softplus(beta=2, threshold=10)", "Softsign()", "Hardtanh()", "Hardtanh(-2, 2, inplace=True)", "Hardsigmoid()",
    "Hardsigmoid(inplace=True)", "Hardswish()", "Hardswish(inplace=True)", "Sigmoid()", "Tanh()", "Tanhshrink()",
    "Softmax()", "Softmax(dim=1)", "LogSoftmax(dim=-1)", "Softmin(dim=0)", "GLU()", "GLU(dim=1)", "Threshold(0.1, 20)",
    "Threshold(0.1, 20, inplace=True)", "CosineSimilarity()", "CosineSimilarity(dim=0, eps=1e-6)", "PairwiseDistance()",
    "PairwiseDistance(p=1, eps=1e-5, keepdim=True)",
    "BatchNorm1d(4)", "BatchNorm1d(4, eps=1e-3, momentum=None, affine=False, track_running_stats=False)",
    "BatchNorm2d(8)", "BatchNorm2d(8, momentum=0.01)", "InstanceNorm2d(3)",
    "InstanceNorm2d(3, affine=True, track_running_stats=True)", "LayerNorm(4)", "LayerNorm(4, bias=False)",
    "LayerNorm((3, 4), eps=1e-6, elementwise_affine=False)", "GroupNorm(2, 4)", "GroupNorm(2, 4, affine=False, eps=1e-3)",
    "RMSNorm(4)", "RMSNorm([2, 4], eps=1e-6, elementwise_affine=False)",
    "Dropout()", "Dropout(0.1, inplace=True)", "Dropout2d(0.2)", "AlphaDropout(0.3)", "Embedding(10, 3)",
    "Embedding(10, 3, padding_idx=0, max_norm=1.0, norm_type=1.0, scale_grad_by_freq=True, sparse=False)",
    "Flatten()", "Flatten(0, 2)", "Unflatten(1, (2, 3))",
    "MSELoss()", "MSELoss(reduction='sum')", "L1Loss()", "SmoothL1Loss(beta=0.5)", "HuberLoss(delta=2.0)",
    "CrossEntropyLoss()", "CrossEntropyLoss(ignore_index=1, label_smoothing=0.1)", "NLLLoss()", "BCELoss()",
    "BCEWithLogitsLoss()", "KLDivLoss(reduction='batchmean', log_target=True)", "CosineEmbeddingLoss(margin=0.5)",
    "MarginRankingLoss(1.0)", "TripletMarginLoss(margin=2.0, p=1)", "PoissonNLLLoss()",
    "PoissonNLLLoss(log_input=False, full=True)", "GaussianNLLLoss()", "GaussianNLLLoss(full=True, eps=1e-3)",
]


@pytest.mark.parametrize("spec", LAYERS)
def test_layer_printed_form_matches_torch(spec):
    assert repr(eval("ember.nn." + spec)) == repr(eval("torch.nn." + spec))


def build(lib):
    """A small ResNet-like image + token model using every container and most layer families."""
    nn = lib.nn

    class Block(nn.Module):
        def __init__(self, c):
            super().__init__()
            self.conv1 = nn.Conv2d(c, c, 3, padding=1, bias=False)
            self.bn1 = nn.BatchNorm2d(c)
            self.relu = nn.ReLU(inplace=True)
            self.conv2 = nn.Conv2d(c, c, 3, padding=1, bias=False)
            self.bn2 = nn.BatchNorm2d(c)

        def forward(self, x):
            return self.relu(self.bn2(self.conv2(self.relu(self.bn1(self.conv1(x))))) + x)

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.stem = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1, bias=False), nn.BatchNorm2d(8), nn.ReLU(inplace=True),
                                      nn.MaxPool2d(2))
            self.blocks = nn.ModuleList([Block(8) for _ in range(3)] + [nn.Dropout2d(0.1)])
            self.embed = nn.Embedding(20, 8, padding_idx=0)
            self.text = nn.Sequential(nn.LayerNorm(8), nn.Linear(8, 8), nn.GELU(), nn.Dropout(0.1))
            self.heads = nn.ModuleDict({
                "cls": nn.Sequential(nn.AdaptiveAvgPool2d((1, 1)), nn.Flatten(),
                                     nn.Sequential(nn.Linear(16, 12), nn.BatchNorm1d(12), nn.PReLU(), nn.Dropout(0.2),
                                                   nn.Linear(12, 5))),
                "aux": nn.Sequential(nn.Conv2d(8, 4, 1), nn.GroupNorm(2, 4), nn.SiLU(), nn.Upsample(scale_factor=2),
                                     nn.ConvTranspose2d(4, 2, 2, stride=2), nn.InstanceNorm2d(2, affine=True),
                                     nn.Tanh()),
            })
            self.gates = nn.ParameterDict({"img": nn.Parameter(lib.ones(1)), "txt": nn.Parameter(lib.ones(1))})
            self.register_buffer("step", lib.zeros((), dtype=lib.int64))

        def forward(self, img, tokens):
            x = self.stem(img)
            for b in self.blocks:
                x = b(x)
            t = self.text(self.embed(tokens)).mean(1)  # (N, 8)
            fused = lib.cat([x * self.gates["img"], t[:, :, None, None].expand_as(x) * self.gates["txt"]], 1)
            return self.heads["cls"](fused), self.heads["aux"](x)

    return Net()


def _inputs(seed=0):
    rng = np.random.default_rng(seed)
    return rng.standard_normal((4, 3, 8, 8)).astype(np.float32), rng.integers(0, 20, (4, 5))


def _run(model, lib, train):
    model.train(train)
    for m in model.modules():  # random masks differ between the libraries: dropout off, BatchNorm in train mode
        if type(m).__name__.startswith("Dropout"):
            m.eval()
    img, tok = _inputs()
    return model(lib.tensor(img), lib.tensor(tok))


def test_realistic_model_printed_form_matches_torch():
    e, t = build(ember), build(torch)
    assert repr(e) == repr(t)
    assert str(e) == str(t)
    assert [n for n, _ in e.named_modules()] == [n for n, _ in t.named_modules()]
    assert [(n, tuple(p.shape)) for n, p in e.named_parameters()] == [(n, tuple(p.shape)) for n, p in t.named_parameters()]


def _to_numpy(sd):
    return {k: v.detach().numpy() for k, v in sd.items()}


def _same_state(e_sd, t_sd):
    assert list(e_sd) == list(t_sd)
    for k in t_sd:
        assert_close(e_sd[k], t_sd[k], what=k)


@pytest.mark.parametrize("train", [True, False])
def test_torch_state_dict_loads_into_ember_and_back(train):
    torch.manual_seed(0)
    e, t = build(ember), build(torch)
    _run(t, torch, True)  # move running stats and num_batches_tracked off their initial values
    t_sd = t.state_dict()
    assert t_sd["stem.1.num_batches_tracked"].dtype == torch.int64
    assert repr(e.load_state_dict(_to_numpy(t_sd))) == "<All keys matched successfully>"
    _same_state(e.state_dict(), t_sd)
    assert e.state_dict()["stem.1.num_batches_tracked"].dtype == ember.int64
    assert e.state_dict()["step"].dtype == ember.int64
    (ec, ea), (tc, ta) = _run(e, ember, train), _run(t, torch, train)
    assert_close(ec, tc, rtol=1e-4, atol=1e-4, what="cls head")
    assert_close(ea, ta, rtol=1e-4, atol=1e-4, what="aux head")
    (ec.sum() + ea.pow(2).sum()).backward()
    (tc.sum() + ta.pow(2).sum()).backward()
    for (n, p), (_, q) in zip(e.named_parameters(), t.named_parameters()):
        assert_close(p.grad, q.grad, rtol=1e-3, atol=1e-4, what=f"grad {n}")
    _same_state(e.state_dict(), t.state_dict())  # running stats updated alike (train) or untouched (eval)
    # ember -> torch: a fresh torch model takes ember's state and computes the same outputs
    t2 = build(torch)
    t2.load_state_dict({k: torch.from_numpy(v.copy()) for k, v in _to_numpy(e.state_dict()).items()})
    _same_state(e.state_dict(), t2.state_dict())
    assert_close(_run(e, ember, False)[0], _run(t2, torch, False)[0], rtol=1e-4, atol=1e-4, what="after exchange")


def test_state_dict_travels_through_files_both_ways():
    torch.manual_seed(1)
    e, t = build(ember), build(torch)
    _run(t, torch, True)
    buf = io.BytesIO()
    torch.save(t.state_dict(), buf)
    buf.seek(0)
    e.load_state_dict(ember.load(buf))
    _same_state(e.state_dict(), t.state_dict())
    _run(e, ember, True)
    buf = io.BytesIO()
    ember.save(e.state_dict(), buf)
    buf.seek(0)
    t.load_state_dict(torch.load(buf))
    _same_state(e.state_dict(), t.state_dict())
