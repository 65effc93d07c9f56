"""ember's main job: train a small CNN on scikit-learn's digits, save it, reload it, draw its graph.

    python -m ember.demo [--epochs N] [--batch-size B] [--lr LR] [--out DIR] [--ddp [--ranks R]]

Needs the demo extra (``pip install 'ember[demo]'``: scikit-learn for the data set, tqdm for progress
bars, safetensors for the weights). The graph picture is drawn when graphviz is installed
(``pip install 'ember[viz]'`` and Graphviz's ``dot``); otherwise its DOT text is written.
``--ddp`` trains the same model with DistributedDataParallel on R MPI ranks (``pip install 'ember[dist]'``;
the demo starts them itself), each on its DistributedSampler share of every global batch of B images.
"""
from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

import ember as torch
from ember import nn
from ember.utils.data import DataLoader, TensorDataset


def _require(module: str, extra: str = "demo"):
    try:
        return __import__(module)
    except ImportError:
        sys.exit(f"ember.demo needs '{module}': pip install 'ember[{extra}]' (or run `make demo`)")


class DigitsNet(nn.Module):
    """conv(1→16) → ReLU → maxpool → conv(16→32) → ReLU → maxpool → linear(128→64) → ReLU → linear(64→10)."""

    def __init__(self) -> None:
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(1, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2))
        self.classifier = nn.Sequential(nn.Flatten(), nn.Linear(32 * 2 * 2, 64), nn.ReLU(), nn.Linear(64, 10))

    def forward(self, x):
        return self.classifier(self.features(x))


def load_digits_split(seed: int):
    """scikit-learn's 8x8 digits (shipped with it: no download), 75/25 stratified split, scaled to [0, 1]."""
    _require("sklearn")
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split

    digits = load_digits()
    x = (digits.images / 16.0).astype(np.float32)[:, None]
    y = digits.target.astype(np.int64)
    xtr, xte, ytr, yte = train_test_split(x, y, test_size=0.25, random_state=seed, stratify=y)
    return (torch.from_numpy(xtr), torch.from_numpy(ytr)), (torch.from_numpy(xte), torch.from_numpy(yte))


def evaluate(model, x, y, loss_fn):
    model.eval()
    with torch.no_grad():
        out = model(x)
        loss = loss_fn(out, y).item()
        acc = (out.argmax(1) == y).float().mean().item()
    model.train()
    return loss, acc


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m ember.demo", description="Train a CNN on the digits data set.")
    p.add_argument("--epochs", type=int, default=30)
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--lr", type=float, default=3e-3)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", default="out", help="folder for weights, optimizer state and the graph picture")
    p.add_argument("--min-accuracy", type=float, default=0.97, help="exit non-zero below this test accuracy")
    p.add_argument("--ddp", action="store_true", help="train with DistributedDataParallel on --ranks MPI ranks")
    p.add_argument("--ranks", type=int, default=2, help="number of ranks with --ddp")
    args = p.parse_args(argv)
    ddp = None
    if args.ddp:
        from ember.demo.ddp import launch_or_join

        ddp = launch_or_join(sys.argv[1:] if argv is None else argv, args.ranks)
        if isinstance(ddp, int):  # this process launched the ranks: their exit status
            return ddp
        if not ddp.lead:  # rank 0 speaks for the job
            sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - for the rest of this process
    tqdm = _require("tqdm").tqdm
    _require("safetensors")
    from ember.utils.safetensors import load_file, save_file

    os.makedirs(args.out, exist_ok=True)
    torch.manual_seed(args.seed)
    (xtr, ytr), (xte, yte) = load_digits_split(args.seed)
    if ddp is None:
        loader = DataLoader(TensorDataset(xtr, ytr), batch_size=args.batch_size, shuffle=True,
                            generator=torch.Generator().manual_seed(args.seed))
    else:
        loader = ddp.loader(TensorDataset(xtr, ytr), args.batch_size, args.seed)
    torch.autograd.set_detect_stale_graph(True)  # warns if a graph leaks across optimizer steps (docs/debugging.md)
    model = DigitsNet()
    train_model = model if ddp is None else ddp.wrap(model)
    loss_fn = nn.CrossEntropyLoss()
    opt = torch.optim.Adam(model.parameters(), lr=args.lr)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=args.epochs)
    print(model)
    print(f"train {len(xtr)} / test {len(xte)} images, {sum(p.numel() for p in model.parameters())} parameters")
    start = time.perf_counter()
    quiet = ddp is not None and not ddp.lead
    epochs = tqdm(range(1, args.epochs + 1), desc="epochs", unit="epoch", disable=quiet)
    for epoch in epochs:
        total, n = 0.0, 0
        if ddp is not None:
            loader.sampler.set_epoch(epoch)
        for xb, yb in tqdm(loader, desc=f"epoch {epoch}", unit="batch", leave=False, disable=quiet):
            opt.zero_grad()
            loss = loss_fn(train_model(xb), yb)
            loss.backward()
            opt.step()
            total += loss.item() * len(yb)
            n += len(yb)
        sched.step()
        _, train_acc = evaluate(model, xtr, ytr, loss_fn)
        test_loss, test_acc = evaluate(model, xte, yte, loss_fn)
        if not quiet:
            tqdm.write(f"epoch {epoch:2d}  train loss {total / n:.4f}  acc {train_acc:.4f}  |  "
                       f"test loss {test_loss:.4f}  acc {test_acc:.4f}")
    elapsed = time.perf_counter() - start
    if quiet:
        return 0  # the other ranks hold the same model: rank 0 saves and checks it

    weights = os.path.join(args.out, "digits_cnn.safetensors")
    opt_path = os.path.join(args.out, "optimizer.pt")
    save_file(model.state_dict(), weights)
    torch.save(opt.state_dict(), opt_path)
    fresh = DigitsNet()
    fresh.load_state_dict(load_file(weights))
    opt2 = torch.optim.Adam(fresh.parameters(), lr=args.lr)
    opt2.load_state_dict(torch.load(opt_path))
    _, reloaded_acc = evaluate(fresh, xte, yte, loss_fn)
    print(f"saved {weights} and {opt_path}; reloaded model test accuracy {reloaded_acc:.4f} "
          f"({'identical' if reloaded_acc == test_acc else 'DIFFERENT'})")

    from ember.viz import make_dot

    out = model(xte[:1])
    dot = make_dot(out, params=dict(model.named_parameters()))
    try:
        picture = dot.render(os.path.join(args.out, "digits_cnn_graph"), format="svg", cleanup=True)
        print(f"graph picture: {picture}")
    except Exception as e:  # noqa: BLE001 - the picture is optional
        path = os.path.join(args.out, "digits_cnn_graph.dot")
        with open(path, "w") as f:
            f.write(dot.source)
        print(f"graph written as DOT text to {path} ({str(e).splitlines()[0]})")
    print(f"test accuracy {test_acc:.4f} in {elapsed:.1f} s of training")
    ok = test_acc >= args.min_accuracy and reloaded_acc == test_acc
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
