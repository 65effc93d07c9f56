"""Anomaly detection against torch: NaN gradients name the node; the forward traceback is shown."""
from __future__ import annotations

import inspect
import warnings

import pytest

from oracle import same, ember, torch


def _nan_custom(lib):
    class Bad(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x.clone()

        @staticmethod
        def backward(ctx, g):
            return g * float("nan")
    return Bad


def _quiet(fn):
    def run(lib):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return fn(lib)
    return run


@pytest.mark.parametrize("how", ["detect_anomaly", "set_detect_anomaly"])
def test_nan_in_backward_raises_naming_the_node(how):
    def fn(lib):
        x = lib.tensor([0.0, 1.0], requires_grad=True)

        def body():
            y = x.sqrt()
            (y * 0).sum().backward()
        if how == "detect_anomaly":
            with lib.autograd.detect_anomaly():
                body()
        else:
            lib.autograd.set_detect_anomaly(True)
            try:
                body()
            finally:
                lib.autograd.set_detect_anomaly(False)
    e, t = same(_quiet(fn))
    assert str(t) == "Function 'SqrtBackward0' returned nan values in its 0th output."
    assert not ember.is_anomaly_enabled()


def test_nan_from_custom_function_and_check_nan_off():
    def raises(lib):
        with lib.autograd.detect_anomaly():
            x = lib.ones(2, requires_grad=True)
            _nan_custom(lib).apply(x).sum().backward()
    same(_quiet(raises))

    def passes(lib):
        with lib.autograd.detect_anomaly(check_nan=False):
            x = lib.tensor([0.0, 1.0], requires_grad=True)
            (x.sqrt() * 0).sum().backward()
            return x.grad, lib.is_anomaly_enabled(), lib.is_anomaly_check_nan_enabled()
    same(_quiet(passes))


def test_nan_without_anomaly_mode_is_silent():
    def fn(lib):
        x = lib.tensor([0.0, 1.0], requires_grad=True)
        (x.sqrt() * 0).sum().backward()
        return x.grad
    same(fn)


def test_state_functions_and_enable_warning():
    def fn(lib):
        r = [lib.is_anomaly_enabled()]
        with lib.autograd.set_detect_anomaly(True, check_nan=False):
            r.append((lib.is_anomaly_enabled(), lib.is_anomaly_check_nan_enabled()))
        r.append((lib.is_anomaly_enabled(), lib.is_anomaly_check_nan_enabled()))
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            with lib.autograd.detect_anomaly():
                pass
        r.append([str(m.message) for m in w])
        return r
    same(fn)


def _failing_backward_warning(lib):
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        with lib.autograd.detect_anomaly():
            x = lib.tensor([0.0, 1.0], requires_grad=True)
            y = x.sqrt(); line = inspect.currentframe().f_lineno  # noqa: E702 - the op's line
            with pytest.raises(RuntimeError):
                (y * 0).sum().backward()
    msgs = [str(m.message) for m in w if "Error detected" in str(m.message)]
    assert len(msgs) == 1, [str(m.message) for m in w]
    return msgs[0], line


def test_the_forward_traceback_names_the_test_line():
    for lib in (ember, torch):
        msg, line = _failing_backward_warning(lib)
        assert msg.startswith("Error detected in SqrtBackward0. Traceback of forward call that caused the error:")
        assert f'File "{__file__}", line {line}' in msg, msg
        if lib is ember:
            assert "ember/" not in msg.replace(__file__, "")  # only the user's frames


def test_exception_in_custom_backward_warns_with_traceback():
    for lib in (ember, torch):
        class Boom(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x.clone()

            @staticmethod
            def backward(ctx, g):
                raise ValueError("boom")
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            with lib.autograd.detect_anomaly():
                y = Boom.apply(lib.ones(2, requires_grad=True)); line = inspect.currentframe().f_lineno  # noqa
                with pytest.raises(ValueError, match="boom"):
                    y.sum().backward()
        msgs = [str(m.message) for m in w if "Error detected in BoomBackward" in str(m.message)]
        assert len(msgs) == 1 and f"line {line}" in msgs[0], [str(m.message) for m in w]
