"""Public model definitions run on the SAME weights and inputs on torch and on ember: outputs and gradients compared.

    python tools/world/models.py SIDE NAME OUTDIR     (run by tools.world.run under the side's preparations)

The torch side builds the model (seed 0), saves its state_dict with torch.save, runs one forward and one backward of
``(out * w).sum()`` for a fixed random ``w``, and saves the output and every gradient. The ember side builds the same
class, loads that torch-written file with torch.load / load_state_dict (so the checkpoint format is crossed too),
runs the same input and compares. Dropout-free models are also compared in train mode (batch-norm batch
statistics and running-stat updates); every model in eval mode.

NOTE [float64 reference]: a batch norm over two samples, or a deep stack of them, amplifies float32 rounding, so
ember and torch can differ by several percent in a gradient while both are right to float32's precision. The torch
side therefore also runs a float64 copy of the model on the same weights and input; an array counts against ember
only when ember's error against that reference exceeds ten times torch's own float32 error (and 1e-4).
"""
from __future__ import annotations

import copy
import json
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

sys.path[:] = [p for p in sys.path if os.path.abspath(p) != os.path.dirname(os.path.abspath(__file__))]


@dataclass
class Model:
    name: str
    source: tuple            # (owner/name, commit), as in scripts.py
    build: str               # Python expression; may use names imported by ``imports``
    imports: str             # statements run in the repository root first
    inputs: list = field(default_factory=lambda: [("float", (2, 3, 32, 32))])  # ("float"|"long:N", shape)
    export: list | None = None
    train_mode: bool = True  # also compare a forward/backward in train mode

    def __post_init__(self):
        if self.export is None and self.source[0] == "lucidrains/vit-pytorch":
            self.export = ["vit_pytorch"]  # the snapshot lacks the README's images


_VIT_VARIANTS = [  # (name, module, constructor, input shape): small configurations of vit-pytorch's README models
    ("CaiT", "cait", "CaiT(image_size=32, patch_size=8, num_classes=10, dim=64, depth=2, cls_depth=1, heads=4, "
                     "mlp_dim=128)", (2, 3, 32, 32)),
    ("DeepViT", "deepvit", "DeepViT(image_size=32, patch_size=8, num_classes=10, dim=64, depth=2, heads=4, "
                           "mlp_dim=128)", (2, 3, 32, 32)),
    ("CrossViT", "cross_vit", "CrossViT(image_size=32, num_classes=10, depth=1, sm_dim=32, sm_patch_size=8, "
                              "sm_enc_depth=1, sm_enc_heads=2, sm_enc_mlp_dim=64, lg_dim=48, lg_patch_size=16, "
                              "lg_enc_depth=1, lg_enc_heads=2, lg_enc_mlp_dim=64, cross_attn_depth=1, "
                              "cross_attn_heads=2, dropout=0.0, emb_dropout=0.0)", (2, 3, 32, 32)),
    ("T2TViT", "t2t", "T2TViT(dim=64, image_size=32, depth=2, heads=4, mlp_dim=128, num_classes=10, "
                      "t2t_layers=((7, 4), (3, 2)))", (2, 3, 32, 32)),
    ("CCT", "cct", "CCT(img_size=(32, 32), embedding_dim=64, n_conv_layers=1, kernel_size=3, stride=1, padding=1, "
                   "pooling_kernel_size=3, pooling_stride=2, pooling_padding=1, num_layers=2, num_heads=2, "
                   "mlp_ratio=2., num_classes=10, positional_embedding='learnable')", (2, 3, 32, 32)),
    ("LeViT", "levit", "LeViT(image_size=64, num_classes=10, stages=2, dim=(32, 64), depth=1, heads=(2, 4), "
                       "mlp_mult=2, dropout=0.)", (2, 3, 64, 64)),
    ("PiT", "pit", "PiT(image_size=32, patch_size=4, dim=32, num_classes=10, depth=(1, 1), heads=2, mlp_dim=64)",
     (2, 3, 32, 32)),
    ("MobileViT", "mobile_vit", "MobileViT(image_size=(64, 64), dims=[32, 40, 48], channels=[16, 16, 24, 24, 32, "
                                "32, 40, 40, 48, 48, 96], num_classes=10)", (2, 3, 64, 64)),
    ("MaxViT", "max_vit", "MaxViT(num_classes=10, dim_conv_stem=16, dim=16, dim_head=8, depth=(1, 1), "
                          "window_size=4, dropout=0.0)", (2, 3, 32, 32)),
    ("NesT", "nest", "NesT(image_size=32, patch_size=4, dim=32, heads=2, num_hierarchies=2, block_repeats=(1, 1), "
                     "num_classes=10)", (2, 3, 32, 32)),
    ("XCiT", "xcit", "XCiT(image_size=32, patch_size=8, num_classes=10, dim=64, depth=2, cls_depth=1, heads=4, "
                     "mlp_dim=128, local_patch_kernel_size=3)", (2, 3, 32, 32)),
    ("RegionViT", "regionvit", "RegionViT(dim=(16, 32, 64, 128), depth=(1, 1, 1, 1), window_size=7, "
                               "num_classes=10)", (1, 3, 224, 224)),
    ("ScalableViT", "scalable_vit", "ScalableViT(num_classes=10, dim=16, heads=(1, 2, 2, 2), depth=(1, 1, 1, 1), "
                                    "ssa_dim_key=(8, 8, 8, 8), reduction_factor=(4, 2, 1, 1), "
                                    "window_size=(8, 4, None, None), dropout=0.0)", (1, 3, 64, 64)),
    ("SimpleViT with FFT", "simple_vit_with_fft", "SimpleViT(image_size=32, patch_size=8, freq_patch_size=8, "
                                                  "num_classes=10, dim=64, depth=2, heads=4, mlp_dim=128)",
     (2, 3, 32, 32)),
    ("ViT 3D", "vit_3d", "ViT(image_size=32, image_patch_size=8, frames=8, frame_patch_size=4, num_classes=10, "
                         "dim=64, depth=2, heads=4, mlp_dim=128)", (1, 3, 8, 32, 32)),
    ("SimpleViT 1D", "simple_vit_1d", "SimpleViT(seq_len=64, patch_size=8, num_classes=10, dim=64, depth=2, "
                                      "heads=4, mlp_dim=128)", (2, 3, 64)),
]


def _tables():
    from tools.world.scripts import CIFAR, EXAMPLES, MINGPT, NANOGPT, UNET, VIT

    cifar = "import sys; sys.path.insert(0, '.'); from models import *"
    gpt_in = [("long:65", (2, 16))]
    return [
        # EfficientNetB0 drops connections and activations with functional calls in train mode (random on each
        # side): eval mode only
        *[Model(f"pytorch-cifar {expr}", CIFAR, expr, cifar, train_mode=expr != "EfficientNetB0()") for expr in (
            "ResNet18()", "PreActResNet18()", "VGG('VGG11')", "MobileNetV2()", "ShuffleNetV2(0.5)", "SimpleDLA()",
            "RegNetX_200MF()", "EfficientNetB0()", "DenseNet121()", "GoogLeNet()", "SENet18()", "LeNet()")],
        Model("Pytorch-UNet UNet(bilinear=False)", UNET, "UNet(3, 2, bilinear=False)", "from unet import UNet",
              [("float", (1, 3, 64, 64))]),
        Model("Pytorch-UNet UNet(bilinear=True)", UNET, "UNet(3, 2, bilinear=True)", "from unet import UNet",
              [("float", (1, 3, 64, 64))]),
        Model("vit-pytorch ViT", VIT, "ViT(image_size=32, patch_size=8, num_classes=10, dim=64, depth=2, heads=4, "
              "mlp_dim=128)", "from vit_pytorch import ViT"),
        Model("vit-pytorch SimpleViT", VIT, "SimpleViT(image_size=32, patch_size=8, num_classes=10, dim=64, depth=2, "
              "heads=4, mlp_dim=128)", "from vit_pytorch import SimpleViT"),
        *[Model(f"vit-pytorch {name}", VIT, build, f"from vit_pytorch.{module} import {build.split('(')[0]}",
                [("float", shape)])
          for name, module, build, shape in _VIT_VARIANTS],
        Model("nanoGPT GPT", NANOGPT, "GPT(GPTConfig(block_size=32, vocab_size=65, n_layer=2, n_head=4, n_embd=64, "
              "dropout=0.0, bias=True))", "from model import GPT, GPTConfig", gpt_in),
        Model("minGPT GPT", MINGPT, "_mingpt()", "from mingpt.model import GPT\n"
              "def _mingpt():\n    c = GPT.get_default_config(); c.model_type = None; c.vocab_size = 65\n"
              "    c.block_size = 32; c.n_layer = 2; c.n_head = 4; c.n_embd = 64\n"
              "    c.embd_pdrop = c.resid_pdrop = c.attn_pdrop = 0.0\n    return GPT(c)", gpt_in),
        Model("examples super_resolution Net", EXAMPLES, "Net(upscale_factor=3)",
              "import sys; sys.path.insert(0, 'super_resolution'); from model import Net", [("float", (2, 1, 20, 20))],
              export=["super_resolution"]),
        Model("examples fast_neural_style TransformerNet", EXAMPLES, "TransformerNet()",
              "import sys; sys.path.insert(0, 'fast_neural_style/neural_style'); from transformer_net import "
              "TransformerNet", [("float", (1, 3, 32, 32))], export=["fast_neural_style"]),
        Model("examples word_language_model LSTM", EXAMPLES, "RNNModel('LSTM', 50, 16, 16, 2, 0.0)",
              "import sys; sys.path.insert(0, 'word_language_model'); from model import RNNModel",
              [("long:50", (7, 3)), ("hidden", (2, 3, 16))], export=["word_language_model"]),
        Model("examples word_language_model Transformer", EXAMPLES, "TransformerModel(50, 16, 2, 32, 2, 0.0)",
              "import sys; sys.path.insert(0, 'word_language_model'); from model import TransformerModel",
              [("long:50", (7, 3))], export=["word_language_model"]),
    ]


def _arrays(specs):
    rng = np.random.default_rng(0)
    out = []
    for kind, shape in specs:
        if kind.startswith("long:"):
            out.append(rng.integers(0, int(kind[5:]), shape).astype(np.int64))
        elif kind == "hidden":
            out.append(("hidden", rng.normal(size=shape).astype(np.float32)))
        else:
            out.append(rng.normal(size=shape).astype(np.float32))
    return out


def _first(out):
    while isinstance(out, (tuple, list)):
        out = out[0]
    return out


def _pass(torch, model, arrays, train, dtype=None):
    """Output and gradients of one forward/backward (floating inputs cast to ``dtype`` when given); returns
    {name: ndarray}."""
    model.train(train)
    cast = (lambda t: t.to(dtype) if t.is_floating_point() else t) if dtype is not None else (lambda t: t)
    args = []
    for a in arrays:
        if isinstance(a, tuple):  # an LSTM's (h, c) pair
            h = cast(torch.from_numpy(a[1].copy()))
            args.append((h, h.clone()))
        else:
            t = cast(torch.from_numpy(a.copy()))
            if t.is_floating_point():
                t.requires_grad_(True)
            args.append(t)
    model.zero_grad()
    out = _first(model(*args))
    out = out.float() if dtype is None else out
    w = torch.from_numpy(np.random.default_rng(1).normal(size=tuple(out.shape)).astype(np.float32)).to(out.dtype)
    (out * w).sum().backward()
    res = {"out": out.detach().numpy()}
    for i, a in enumerate(args):
        if isinstance(a, torch.Tensor) and a.grad is not None:
            res[f"input{i}.grad"] = a.grad.numpy()
    for n, p in model.named_parameters():
        if p.grad is not None:
            res[f"{n}.grad"] = p.grad.numpy()
    for n, b in model.named_buffers():
        if b.is_floating_point():
            res[f"{n} (buffer after)"] = b.detach().numpy().copy()
    return res


def _has_dropout(model):
    return any("Dropout" in type(m).__name__ and getattr(m, "p", 0) > 0 for m in model.modules())


def run(side, name, outdir):
    import torch

    spec = {m.name: m for m in _tables()}[name]
    sys.path.insert(0, os.getcwd())
    ns = {}
    exec(spec.imports, ns)  # noqa: S102 - the table's own import lines
    outdir = Path(outdir)
    arrays = _arrays(spec.inputs)
    torch.manual_seed(0)
    model = eval(spec.build, ns)  # noqa: S307 - the table's constructor
    initial = outdir / "state.pt"
    if side == "torch":
        torch.save(model.state_dict(), initial)
    else:
        model.load_state_dict(torch.load(initial))
    results, results64 = {}, {}
    modes = [False] + ([True] if spec.train_mode and not _has_dropout(model) else [])
    for train in modes:
        if train:  # train mode starts from the saved running statistics on both sides
            model.load_state_dict(torch.load(initial))
        mode = "train" if train else "eval"
        if side == "torch" and results64 is not None:  # NOTE [float64 reference]
            try:
                for k, v in _pass(torch, copy.deepcopy(model).double(), arrays, train, torch.float64).items():
                    results64[f"{mode} {k}"] = v
            except RuntimeError as err:  # a model that makes float32 tensors of its own (minGPT)
                print(f"no float64 reference: {err}")
                results64 = None
        for k, v in _pass(torch, model, arrays, train).items():
            results[f"{mode} {k}"] = v
    np.savez(outdir / f"{side}.npz", **results)
    if side == "torch":
        (outdir / "torch64.npz").unlink(missing_ok=True)
        if results64 is not None:
            np.savez(outdir / "torch64.npz", **results64)
    if side == "ember":
        ref = np.load(outdir / "torch.npz")
        ref64 = np.load(outdir / "torch64.npz") if (outdir / "torch64.npz").exists() else None
        report = {}
        # NOTE [gradient noise floor]: a gradient that is zero in exact arithmetic (a bias before a batch norm)
        # is float32 rounding noise on both sides; each array's error is scaled by its own largest magnitude or by
        # 1e-3 of the largest gradient of the same pass, whichever is larger.
        floor = {mode: 1e-3 * max((float(np.abs(ref[k]).max()) for k in ref.files
                                   if k.startswith(mode) and k.endswith(".grad")), default=0.0)
                 for mode in ("train", "eval")}
        for k in ref.files:
            t = ref[k]
            e = results.get(k)
            if e is None or e.shape != t.shape:
                report[k] = "missing" if e is None else f"shape {e.shape} vs {t.shape}"
                continue
            scale = max(float(np.abs(t).max()), floor[k.split()[0]], 1e-12)
            err = lambda a, b: float(np.abs(a.astype(np.float64) - b).max() / scale)
            report[k] = {"vs torch": err(e, t)}
            if ref64 is not None:
                report[k].update({"vs float64": err(e, ref64[k]), "torch vs float64": err(t, ref64[k])})
        for k in set(results) - set(ref.files):
            report[k] = "extra"
        (outdir / "compare.json").write_text(json.dumps(report, indent=1))
        summary = summarize(report)
        print(f"worst relative error {summary['worst']:.3g} over {summary['arrays']} arrays; vs float64: ember "
              f"{summary['ember64']:.3g}, torch {summary['torch64']:.3g}; beyond torch's own float32 error: "
              f"{summary['beyond']}" + (f"; mismatched: {summary['mismatched']}" if summary["mismatched"] else ""))


def summarize(report):
    """The worst errors of a compare.json report and the arrays where ember's float32 error against the float64
    reference exceeds ten times torch's own (and 1e-4)."""
    ok = {k: v for k, v in report.items() if isinstance(v, dict)}
    return {"arrays": len(report), "mismatched": [k for k in report if k not in ok],
            "worst": max((v["vs torch"] for v in ok.values()), default=0.0),
            "ember64": max((v.get("vs float64", float("nan")) for v in ok.values()), default=0.0),
            "torch64": max((v.get("torch vs float64", float("nan")) for v in ok.values()), default=0.0),
            "beyond": sorted(k for k, v in ok.items() if "vs float64" in v
                             and v["vs float64"] > max(10 * v["torch vs float64"], 1e-4))}


if __name__ == "__main__":
    run(*sys.argv[1:4])
