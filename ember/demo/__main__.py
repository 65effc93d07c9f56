"""Placeholder until the training-stack issue: fits a tiny regression with raw autograd."""
from __future__ import annotations

import argparse

import ember as torch


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m ember.demo", description=__doc__)
    p.add_argument("--steps", type=int, default=200)
    p.add_argument("--lr", type=float, default=0.1)
    args = p.parse_args(argv)
    torch.manual_seed(0)
    x = torch.randn(256, 3)
    true_w = torch.tensor([[1.5], [-2.0], [0.5]])
    y = x @ true_w + 0.3
    w = torch.zeros(3, 1, requires_grad=True)
    b = torch.zeros(1, requires_grad=True)
    for step in range(args.steps):
        loss = ((x @ w + b - y) ** 2).mean()
        loss.backward()
        with torch.no_grad():
            w -= args.lr * w.grad
            b -= args.lr * b.grad
        w.grad = None
        b.grad = None
        if step % 50 == 0 or step == args.steps - 1:
            print(f"step {step:4d}  loss {loss.item():.6f}")
    print("learned w:", w.detach().reshape(-1), "b:", b.detach())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
