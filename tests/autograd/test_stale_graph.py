"""Stale-graph detector: the two classic mistakes warn, naming the tensor; correct loops stay silent."""
import warnings

import pytest

from oracle import ember as torch
from ember.autograd import StaleGraphWarning


@pytest.fixture(autouse=True)
def detector():
    with torch.autograd.set_detect_stale_graph(True):
        yield
    assert not torch.autograd.is_stale_graph_detection_enabled()


def _stale(record):
    return [str(w.message) for w in record if issubclass(w.category, StaleGraphWarning)]


def _rnn():
    torch.manual_seed(0)
    cell = torch.nn.RNNCell(3, 4)
    return cell, torch.optim.SGD(cell.parameters(), lr=0.1)


def test_undetached_rnn_state_warns_naming_it_before_the_error():
    cell, opt = _rnn()
    h = torch.zeros(1, 4)
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        with pytest.raises(RuntimeError, match="backward through the graph a second time"):
            for _ in range(3):
                opt.zero_grad()
                h = cell(torch.randn(1, 3), h)
                h.sum().backward()
                opt.step()
    msgs = _stale(record)
    assert len(msgs) == 1 and "before the last optimizer.step()" in msgs[0]
    assert "`h`" in msgs[0] and "h = h.detach()" in msgs[0]
    assert record[0].filename == __file__  # points at the user's backward line


def test_state_kept_on_a_module_attribute_is_named():
    cell, opt = _rnn()

    class Model(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.cell = cell
            self.hidden = torch.zeros(1, 4)

        def forward(self, x):
            self.hidden = self.cell(x, self.hidden)
            return self.hidden.sum()
    model = Model()
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        for _ in range(2):
            opt.zero_grad()
            loss = model(torch.randn(1, 3))
            try:
                loss.backward()
            except RuntimeError:
                break
            opt.step()
    msgs = _stale(record)
    assert msgs and "`model.hidden`" in msgs[0]


def test_accumulated_loss_warns_at_the_step_that_keeps_old_graphs():
    torch.manual_seed(0)
    model = torch.nn.Linear(3, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    total_loss = 0
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        for _ in range(3):
            opt.zero_grad()
            loss = model(torch.randn(2, 3)).pow(2).mean()
            loss.backward()
            opt.step()
            total_loss += loss
    msgs = _stale(record)
    assert msgs and all("`total_loss`" in m and "total_loss += loss.item()" in m for m in msgs)


def test_backward_of_an_accumulated_loss_warns():
    torch.manual_seed(0)
    model = torch.nn.Linear(3, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    total = 0
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        with pytest.raises(RuntimeError):  # the old graph was freed (or its parameters changed in place)
            for _ in range(3):
                opt.zero_grad()
                total = total + model(torch.randn(2, 3)).pow(2).mean()
                total.backward()
                opt.step()
    msgs = [m for m in _stale(record) if m.startswith("backward()")]
    assert msgs and "`total` accumulates losses" in msgs[0]


def test_correct_loops_are_silent():
    cell, opt = _rnn()
    gen = torch.nn.Linear(2, 3)
    disc = torch.nn.Linear(3, 1)
    g_opt = torch.optim.SGD(gen.parameters(), lr=0.1)
    d_opt = torch.optim.SGD(disc.parameters(), lr=0.1)
    h = torch.zeros(1, 4)
    total = 0.0
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        for _ in range(4):
            opt.zero_grad()
            h = cell(torch.randn(1, 3), h)
            loss = h.pow(2).mean()
            loss.backward()
            opt.step()
            h = h.detach()
            total += loss.item()
            # a GAN step: the generator's graph is reused after the discriminator's step, which is correct
            fake = gen(torch.randn(4, 2))
            d_opt.zero_grad()
            disc(fake.detach()).mean().backward()
            d_opt.step()
            g_opt.zero_grad()
            (-disc(fake).mean()).backward()
            g_opt.step()
    assert _stale(record) == []


def test_off_by_default_and_when_disabled():
    with torch.autograd.set_detect_stale_graph(False):
        assert not torch.autograd.is_stale_graph_detection_enabled()
        model = torch.nn.Linear(3, 1)
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        total_loss = 0
        with warnings.catch_warnings(record=True) as record:
            warnings.simplefilter("always")
            for _ in range(3):
                loss = model(torch.randn(2, 3)).pow(2).mean()
                loss.backward()
                opt.step()
                total_loss += loss
        assert _stale(record) == []
