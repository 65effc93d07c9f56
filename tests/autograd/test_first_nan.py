"""First-NaN tracer (anomaly mode) and the in-place error naming the line that changed a saved tensor."""
import inspect
import re
import warnings

import pytest

from oracle import ember, torch


def _line_of(marker: str) -> int:
    src, start = inspect.getsourcelines(inspect.getmodule(_line_of))
    return next(i + 1 for i, line in enumerate(src) if line.rstrip().endswith(marker))


def _first_reports(record):
    return [str(w.message) for w in record if "first non-finite value" in str(w.message)]


def test_first_forward_op_making_nan_or_inf_from_finite_inputs_is_reported_once():
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        with ember.autograd.detect_anomaly():
            x = ember.tensor([1.0, 0.0, 2.0], requires_grad=True)
            y = x * 2
            z = y.log()  # first-nonfinite
            w = (z * 0).exp()  # nan from a non-finite input: not the first
            w.sum()
    reports = _first_reports(record)
    assert len(reports) == 1 and "LogBackward0" in reports[0]
    assert f"line {_line_of('# first-nonfinite')}" in reports[0]


def test_no_report_without_check_nan_or_for_non_finite_constants():
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        with ember.autograd.detect_anomaly(check_nan=False):
            x = ember.tensor([0.0], requires_grad=True)
            x.log()
        with ember.autograd.detect_anomaly():
            x = ember.tensor([1.0, 2.0], requires_grad=True)
            x.masked_fill(ember.tensor([True, False]), float("-inf"))  # a -inf fill is not an accident
            (x * 2).exp()
        ember.tensor([0.0], requires_grad=True).log()  # anomaly mode off
    assert _first_reports(record) == []


def test_each_anomaly_session_reports_its_own_first():
    for _ in range(2):
        with warnings.catch_warnings(record=True) as record:
            warnings.simplefilter("always")
            with ember.autograd.detect_anomaly():
                (ember.tensor([-1.0], requires_grad=True) * 1).sqrt()
        assert len(_first_reports(record)) == 1


def test_backward_nan_names_the_node_and_its_forward_line():
    def fn(lib):
        with lib.autograd.detect_anomaly():
            x = lib.tensor([0.0, 1.0], requires_grad=True)
            y = x.sqrt()  # sqrt-line
            (y * 0).sum().backward()
    for lib in (ember, torch):
        with warnings.catch_warnings(record=True) as record:
            warnings.simplefilter("always")
            with pytest.raises(RuntimeError, match="Function 'SqrtBackward0' returned nan values in its 0th output"):
                fn(lib)
        tb = [str(w.message) for w in record if "Error detected in SqrtBackward0" in str(w.message)]
        assert tb and "y = x.sqrt()" in tb[0], lib.__name__


def test_pdb_opens_at_the_first_non_finite_op(monkeypatch):
    import pdb

    frames = []
    monkeypatch.setattr(pdb.Pdb, "set_trace", lambda self, frame=None: frames.append((frame.f_code.co_filename, frame.f_lineno)))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with ember.autograd.detect_anomaly(pdb=True):
            x = ember.tensor([0.0], requires_grad=True)
            x.log()  # pdb-line
    assert frames == [(__file__, _line_of("# pdb-line"))]
    assert not ember.autograd.anomaly_mode._pdb


def test_inplace_error_names_the_line_that_changed_the_saved_tensor():
    x = ember.randn(3, requires_grad=True)
    y = x.exp()
    y.add_(1)  # the-inplace-line
    with pytest.raises(RuntimeError, match="modified by an inplace operation") as e:
        y.sum().backward()
    m = re.search(r"ran at (.+):(\d+)", str(e.value))
    assert m and m.group(1) == __file__ and int(m.group(2)) == _line_of("# the-inplace-line")
    tx = torch.randn(3, requires_grad=True)
    ty = tx.exp()
    ty.add_(1)
    with pytest.raises(RuntimeError) as te:
        ty.sum().backward()
    assert str(te.value).split(" Hint")[0].split("[")[0] == str(e.value).split(" Hint")[0].split("[")[0]
