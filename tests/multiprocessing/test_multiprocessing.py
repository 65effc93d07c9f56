"""ember.multiprocessing: tensors move to shared memory when sent to another process and both sides see each
other's in-place writes (as torch's file_descriptor strategy); spawn's success and failure reporting."""
from __future__ import annotations

import pickle

import numpy as np
import pytest

import ember
import ember.multiprocessing as mp
from oracle import torch, same_outcome
import mp_workers


def test_namespace_matches_torch() -> None:
    assert sorted(set(torch.multiprocessing.__all__) - set(mp.__all__)) == []
    same_outcome(lambda lib: (sorted(lib.multiprocessing.get_all_sharing_strategies()),
                              lib.multiprocessing.get_sharing_strategy()))
    same_outcome(lambda lib: lib.multiprocessing.set_sharing_strategy("nope"))


def test_share_memory_keeps_values_views_and_graph_state() -> None:
    base = ember.arange(12.0).reshape(3, 4).requires_grad_(True)
    view = base.detach()[1:, 2:]
    assert not base.is_shared()
    assert base.share_memory_() is base and base.is_shared()
    assert base.tolist() == np.arange(12.0).reshape(3, 4).tolist() and base.requires_grad
    assert base.untyped_storage().is_shared()
    v = ember.ones(6)[2:]
    v.share_memory_()  # a view moves its base: the two keep sharing
    assert v.is_shared() and v._base.is_shared()
    v.fill_(5.0)
    assert v._base.tolist() == [1.0, 1.0, 5.0, 5.0, 5.0, 5.0]
    assert view.tolist() == [[6.0, 7.0], [10.0, 11.0]]


def test_module_share_memory() -> None:
    m = ember.nn.Linear(3, 2)
    w = m.weight
    m.share_memory()
    assert m.weight is w and all(p.is_shared() for p in m.parameters())


def test_spawn_children_write_into_a_shared_tensor() -> None:
    ctx = mp.get_context("spawn")
    q = ctx.Queue()
    t = ember.zeros(3)
    mp.spawn(mp_workers.add_rank, args=(t, q), nprocs=3)
    seen = sorted(q.get(timeout=60) for _ in range(3))
    assert seen == [(0, True), (1, True), (2, True)]
    assert t.tolist() == [1.0, 2.0, 3.0] and t.is_shared()


def test_queue_round_trip_shares_memory_both_ways() -> None:
    ctx = mp.get_context("spawn")
    q_in, q_out = ctx.Queue(), ctx.Queue()
    t = ember.arange(4.0)
    p = ctx.Process(target=mp_workers.echo_doubled, args=(q_in, q_out))
    p.start()
    q_in.put(t)
    assert q_out.get(timeout=60) == 12.0
    p.join(60)
    assert p.exitcode == 0 and t.tolist() == [0.0, 2.0, 4.0, 6.0]


def test_hogwild_updates_the_parents_parameters() -> None:
    model = ember.nn.Linear(2, 1)
    before = model.weight.detach().clone()
    model.share_memory()
    mp.spawn(mp_workers.hogwild, args=(model, 3), nprocs=2)
    assert not np.allclose(before.numpy(), model.weight.detach().numpy())


def test_spawn_reports_the_failing_process() -> None:
    with pytest.raises(mp.ProcessRaisedException, match="-- Process 1 terminated with the following error:") as e:
        mp.spawn(mp_workers.fail, nprocs=2)
    assert "ValueError: worker one failed" in str(e.value) and e.value.error_index == 1
    with pytest.raises(mp.ProcessExitedException, match="process 0 terminated with exit code 3") as e:
        mp.spawn(mp_workers.exit_code, nprocs=2)
    assert e.value.exit_code == 3
    with pytest.warns(FutureWarning, match="only supports start_method=spawn"):
        mp.spawn(mp_workers.fail, nprocs=1, start_method="fork")


def test_non_leaf_requiring_grad_is_refused_as_torch() -> None:
    from multiprocessing.reduction import ForkingPickler

    mp.get_sharing_strategy()  # both libraries' reductions are registered
    torch.multiprocessing.get_sharing_strategy()
    same_outcome(lambda lib: ForkingPickler.dumps(lib.ones(2, requires_grad=True) * 2))


def test_plain_pickle_is_unchanged() -> None:
    t = ember.arange(3.0)
    assert pickle.loads(pickle.dumps(t)).tolist() == [0.0, 1.0, 2.0] and not t.is_shared()
