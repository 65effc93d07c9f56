"""Variable._execution_engine.queue_callback: callables run once the running backward has finished, as torch's."""
import pytest
import torch

import ember


def _trace(lib):
    V = lib.autograd.Variable
    log = []
    x = lib.ones(3, requires_grad=True)
    y = lib.ones(3, requires_grad=True)

    def hook(p):
        log.append(("acc", p.grad.tolist()))
        V._execution_engine.queue_callback(lambda: (log.append(("cb", x.grad.tolist(), y.grad.tolist())),
                                                    V._execution_engine.queue_callback(lambda: log.append("cb2"))))

    x.register_post_accumulate_grad_hook(hook)
    (x * 2 + y * 3).sum().backward()
    g = lib.ones(2, requires_grad=True)
    h = g * 1
    h.register_hook(lambda grad: V._execution_engine.queue_callback(lambda: log.append("grad")))
    lib.autograd.grad((h * h).sum(), g)
    return log


def test_callbacks_run_after_the_graph_and_may_queue_more():
    assert _trace(ember) == _trace(torch)


@pytest.mark.parametrize("lib", [ember, torch], ids=["ember", "torch"])
def test_outside_backward_raises(lib):
    with pytest.raises(RuntimeError, match="Final callbacks can only be installed during backward pass."):
        lib.autograd.Variable._execution_engine.queue_callback(lambda: None)


def test_a_raising_callback_leaves_the_engine_usable():
    V = ember.autograd.Variable
    x = ember.ones(2, requires_grad=True)
    handle = x.register_post_accumulate_grad_hook(lambda p: V._execution_engine.queue_callback(lambda: 1 / 0))
    with pytest.raises(ZeroDivisionError):
        x.sum().backward()
    handle.remove()
    x.sum().backward()
    with pytest.raises(RuntimeError, match="Final callbacks"):
        V._execution_engine.queue_callback(lambda: None)
