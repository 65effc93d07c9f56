"""Functions the multiprocessing tests run in child processes (importable by name, as spawn needs)."""
from __future__ import annotations

import ember


def add_rank(i, t, q):
    """Write into a shared tensor; report what this process saw."""
    t[i] += i + 1
    q.put((i, t.is_shared()))


def echo_doubled(q_in, q_out):
    t = q_in.get()
    t.mul_(2)  # in place: the sender's tensor changes too
    q_out.put(t.sum().item())


def hogwild(i, model, steps):
    """A few SGD steps on a shared model (torch's Hogwild example, tiny)."""
    opt = ember.optim.SGD(model.parameters(), lr=0.1)
    x = ember.ones(4, 2)
    for _ in range(steps):
        opt.zero_grad()
        model(x).pow(2).mean().backward()
        opt.step()


def fail(i):
    if i == 1:
        raise ValueError("worker one failed")


def exit_code(i):
    import sys

    sys.exit(3 if i == 0 else 0)
