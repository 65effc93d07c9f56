"""LR schedulers against torch.optim.lr_scheduler: the same lr sequence (and momentum where cycled)."""
import warnings

import pytest

from oracle import torch, ember


def _opt(lib, kind="SGD", groups=1):
    ps = [lib.nn.Parameter(lib.zeros(2)) for _ in range(groups)]
    if kind == "SGD":
        return lib.optim.SGD([{"params": [p], "lr": 0.1 * (i + 1)} for i, p in enumerate(ps)], lr=0.1, momentum=0.9)
    return lib.optim.Adam([{"params": [p], "lr": 0.1 * (i + 1)} for i, p in enumerate(ps)], lr=0.1)


def _half(e):
    return 0.5 ** e


CASES = {
    "LambdaLR": lambda L, o: L.LambdaLR(o, _half),
    "MultiplicativeLR": lambda L, o: L.MultiplicativeLR(o, lambda e: 0.95),
    "StepLR": lambda L, o: L.StepLR(o, step_size=7, gamma=0.5),
    "MultiStepLR": lambda L, o: L.MultiStepLR(o, milestones=[5, 12, 12, 30], gamma=0.3),
    "ConstantLR": lambda L, o: L.ConstantLR(o, factor=0.25, total_iters=9),
    "LinearLR": lambda L, o: L.LinearLR(o, start_factor=0.1, end_factor=0.9, total_iters=17),
    "ExponentialLR": lambda L, o: L.ExponentialLR(o, gamma=0.93),
    "CosineAnnealingLR": lambda L, o: L.CosineAnnealingLR(o, T_max=11, eta_min=0.001),
    "PolynomialLR": lambda L, o: L.PolynomialLR(o, total_iters=20, power=2.0),
    "CosineAnnealingWarmRestarts": lambda L, o: L.CosineAnnealingWarmRestarts(o, T_0=5, T_mult=2, eta_min=0.01),
    "OneCycleLR": lambda L, o: L.OneCycleLR(o, max_lr=[1.0, 2.0], total_steps=60),
    "OneCycleLR-3phase-linear": lambda L, o: L.OneCycleLR(o, max_lr=1.0, epochs=6, steps_per_epoch=10,
                                                          three_phase=True, anneal_strategy="linear"),
    "CyclicLR": lambda L, o: L.CyclicLR(o, base_lr=0.01, max_lr=0.1, step_size_up=4, step_size_down=6),
    "CyclicLR-triangular2": lambda L, o: L.CyclicLR(o, 0.01, 0.1, step_size_up=5, mode="triangular2"),
    "CyclicLR-exp_range": lambda L, o: L.CyclicLR(o, 0.01, 0.1, step_size_up=5, mode="exp_range", gamma=0.97),
    "SequentialLR": lambda L, o: L.SequentialLR(o, [L.LinearLR(o, 0.1, 1.0, 5), L.ExponentialLR(o, 0.9),
                                                    L.StepLR(o, 3)], milestones=[5, 20]),
    "ChainedScheduler": lambda L, o: L.ChainedScheduler([L.ConstantLR(o, 0.5, 4), L.ExponentialLR(o, 0.95)]),
}


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("kind", ["SGD", "Adam"])
def test_lr_sequence_matches_torch(name, kind):
    seqs = []
    for lib in (ember, torch):
        o = _opt(lib, kind, groups=2)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            s = CASES[name](lib.optim.lr_scheduler, o)
            seq = [list(s.get_last_lr())]
            for _ in range(55):
                o.step()
                s.step()
                seq.append(list(s.get_last_lr()))
                seq.append([g.get("momentum", g.get("betas", (None,))[0]) for g in o.param_groups])
        seqs.append(seq)
    for a, b in zip(*seqs):
        assert a == pytest.approx(b, rel=1e-12, abs=1e-15)


def test_reduce_lr_on_plateau_matches_torch():
    metrics = [1.0, 0.9, 0.9, 0.91, 0.95, 0.9, 0.89, 0.95, 0.96, 0.97, 0.98, 0.5, 0.6, 0.7, 0.8, 0.9]
    for kw in [dict(patience=2), dict(mode="max", patience=1, factor=0.5, cooldown=2),
               dict(threshold_mode="abs", threshold=0.05, patience=0, min_lr=[0.02, 0.05])]:
        seqs = []
        for lib in (ember, torch):
            o = _opt(lib, groups=2)
            s = lib.optim.lr_scheduler.ReduceLROnPlateau(o, **kw)
            seq = []
            for m in metrics:
                s.step(m)
                seq.append(list(s.get_last_lr()))
            seqs.append(seq)
        assert [x for r in seqs[0] for x in r] == pytest.approx([x for r in seqs[1] for x in r])


def test_state_dict_round_trip_resumes():
    o = _opt(ember)
    s = ember.optim.lr_scheduler.StepLR(o, 3, 0.5)
    for _ in range(4):
        o.step()
        s.step()
    sd = s.state_dict()
    assert "optimizer" not in sd
    o2 = _opt(ember)
    s2 = ember.optim.lr_scheduler.StepLR(o2, 3, 0.5)
    s2.load_state_dict(sd)
    o2.param_groups[0]["lr"] = o.param_groups[0]["lr"]
    for _ in range(5):
        s.step()
        s2.step()
    assert s.get_last_lr() == s2.get_last_lr()


def test_errors_match_torch():
    for ctor in [lambda L, o: L.ConstantLR(o, factor=2.0), lambda L, o: L.LinearLR(o, start_factor=0),
                 lambda L, o: L.OneCycleLR(o, max_lr=1.0), lambda L, o: L.ReduceLROnPlateau(o, factor=1.5),
                 lambda L, o: L.CosineAnnealingWarmRestarts(o, T_0=0)]:
        msgs = []
        for lib in (ember, torch):
            with pytest.raises(ValueError) as ei:
                ctor(lib.optim.lr_scheduler, _opt(lib))
            msgs.append(str(ei.value))
        assert msgs[0] == msgs[1]
