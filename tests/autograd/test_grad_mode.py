"""Grad modes against torch: no_grad / enable_grad / set_grad_enabled / inference_mode, in every form."""
from __future__ import annotations

import threading

import pytest

from oracle import same


def test_context_managers_nesting_and_results():
    def fn(lib):
        r = []
        x = lib.ones(2, requires_grad=True)
        with lib.no_grad():
            y = x * 2
            r.append((lib.is_grad_enabled(), y.requires_grad, y.grad_fn))
            with lib.enable_grad():
                z = x * 2
                r.append((lib.is_grad_enabled(), z.requires_grad, z.grad_fn.name()))
                with lib.no_grad():
                    r.append(lib.is_grad_enabled())
            r.append(lib.is_grad_enabled())
        r.append(lib.is_grad_enabled())
        with lib.set_grad_enabled(False):
            r.append(((x * 2).requires_grad, lib.is_grad_enabled()))
            with lib.set_grad_enabled(True):
                r.append((x * 2).requires_grad)
        r.append(lib.is_grad_enabled())
        try:
            with lib.no_grad():
                raise ValueError("inside")
        except ValueError:
            pass
        r.append(lib.is_grad_enabled())
        return r
    same(fn)


def test_set_grad_enabled_as_a_function():
    def fn(lib):
        r = []
        lib.set_grad_enabled(False)
        try:
            r.append((lib.is_grad_enabled(), (lib.ones(1, requires_grad=True) * 2).requires_grad))
        finally:
            lib.set_grad_enabled(True)
        r.append(lib.is_grad_enabled())
        return r
    same(fn)


def test_decorators_on_functions():
    def fn(lib):
        @lib.no_grad()
        def a():
            return lib.is_grad_enabled()

        @lib.no_grad
        def b():
            return lib.is_grad_enabled()

        @lib.set_grad_enabled(False)
        def c():
            return lib.is_grad_enabled()

        @lib.enable_grad()
        def d():
            return lib.is_grad_enabled()

        @lib.inference_mode()
        def e():
            return lib.is_inference_mode_enabled(), lib.is_grad_enabled()

        @lib.inference_mode
        def f():
            return lib.is_inference_mode_enabled()

        @lib.inference_mode(False)
        def g():
            return lib.is_inference_mode_enabled()
        r = [a(), b(), c(), lib.is_grad_enabled(), e(), f()]
        with lib.no_grad():
            r.append(d())
        with lib.inference_mode():
            r.append(g())
            r.append(lib.is_inference_mode_enabled())
        r.append((a.__name__, d.__name__, lib.is_grad_enabled()))
        return r
    same(fn)


def test_decorators_on_generators():
    def fn(lib):
        @lib.no_grad()
        def gen(n):
            for i in range(n):
                got = yield (i, lib.is_grad_enabled())
                if got is not None:
                    yield ("sent", got, lib.is_grad_enabled())
            return "done"

        @lib.enable_grad()
        def gen2():
            yield lib.is_grad_enabled()
        r = [list(gen(3)), lib.is_grad_enabled()]
        g = gen(2)
        r.append(next(g))
        r.append(lib.is_grad_enabled())
        r.append(g.send("x"))
        r.append(next(g))
        try:
            next(g)
            next(g)
        except StopIteration as stop:
            r.append(stop.value)
        with lib.no_grad():
            r.append(list(gen2()))
        return r
    same(fn)


def test_decorating_a_class_is_deprecated_but_works():
    def fn(lib):
        with pytest.warns(FutureWarning, match="Decorating classes is deprecated"):
            @lib.no_grad()
            class A:
                def __init__(self):
                    self.mode = lib.is_grad_enabled()
        return A().mode, lib.is_grad_enabled()
    same(fn)


def test_thread_started_inside_no_grad_has_grad_enabled():
    def fn(lib):
        seen = {}

        def worker(key):
            x = lib.ones(1, requires_grad=True)
            seen[key] = (lib.is_grad_enabled(), (x * 2).requires_grad, lib.is_inference_mode_enabled())
        with lib.no_grad():
            t = threading.Thread(target=worker, args=("no_grad",))
            t.start()
            t.join()
        with lib.inference_mode():
            t = threading.Thread(target=worker, args=("inference",))
            t.start()
            t.join()
        # and a no_grad block in another thread does not leak into this one
        t = threading.Thread(target=lambda: lib.no_grad().__enter__())
        t.start()
        t.join()
        seen["main"] = lib.is_grad_enabled()
        return seen
    same(fn)


# --------------------------------------------------------------------------- inference mode
def test_inference_tensors():
    def fn(lib):
        x = lib.ones(2, requires_grad=True)
        n = lib.ones(3)
        with lib.inference_mode():
            y = x * 2
            z = lib.ones(3)
            z.add_(1)
            nv = n[0:2]
            n.add_(1)
            r = [y.requires_grad, y.is_inference(), z.is_inference(), x.is_inference(), nv.is_inference(),
                 lib.is_inference(z), n._version]
        v = z[0:2]
        r += [v.is_inference(), z.view(3).is_inference(), (z + 1).is_inference(), z.detach().is_inference(),
              z.clone().is_inference(), (z * lib.ones(3, requires_grad=True)).requires_grad]
        with lib.no_grad():
            r.append((n * 2).is_inference())
        return r, z
    same(fn)


@pytest.mark.parametrize("case", ["saved", "saved by in-place", "inplace outside", "setitem outside",
                                  "requires_grad outside", "requires_grad_ outside"])
def test_inference_tensor_errors(case):
    def fn(lib):
        with lib.inference_mode():
            z = lib.ones(3)
        x = lib.ones(3, requires_grad=True)
        if case == "saved":
            (x * z).sum().backward()
        elif case == "saved by in-place":
            (x * 1).mul_(z)
        elif case == "inplace outside":
            z.add_(1)
        elif case == "setitem outside":
            z[0] = 1.0
        elif case == "requires_grad outside":
            z.requires_grad = True
        else:
            z.requires_grad_()
    e, t = same(fn)
    assert isinstance(t, RuntimeError)


def test_inference_tensor_usable_where_not_saved():
    def fn(lib):
        with lib.inference_mode():
            z = lib.full((3,), 2.0)
        x = lib.ones(3, requires_grad=True)
        (x + z).sum().backward()
        with lib.inference_mode():
            z.mul_(2)
        return x.grad, z, (z * 2).is_inference()
    same(fn)


def test_inference_mode_is_per_thread_while_blocks_are_open_elsewhere():
    """Tensors made in one thread while another thread sits in an inference_mode block are ordinary ones; nested
    inference_mode(False) blocks make ordinary tensors; after every block closes, nothing is inference."""
    def fn(lib):
        inside, release, seen = threading.Event(), threading.Event(), {}

        def worker():
            with lib.inference_mode():
                seen["worker"] = lib.ones(2).exp().is_inference()
                inside.set()
                release.wait(10)
        t = threading.Thread(target=worker)
        t.start()
        inside.wait(10)
        seen["main_while_open"] = (lib.ones(2) * 2).is_inference()
        with lib.inference_mode():
            with lib.inference_mode(False):
                seen["nested_false"] = (lib.ones(2) + 1).is_inference()
            seen["nested_true"] = (lib.ones(2) + 1).is_inference()
        release.set()
        t.join()
        seen["after"] = lib.ones(2).tanh().is_inference()
        return seen
    same(fn)
