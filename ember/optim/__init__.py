"""ember.optim: optimizers with torch's update rules and state_dict layout."""
from .optimizer import Optimizer
from .sgd import SGD
from .adam import Adam, AdamW
from .adamax import Adamax
from .nadam import NAdam
from .radam import RAdam
from .rmsprop import RMSprop
from .adagrad import Adagrad
from .adadelta import Adadelta
from .lbfgs import LBFGS

from . import lr_scheduler

__all__ = ["lr_scheduler", "Optimizer", "SGD", "Adam", "AdamW", "Adamax", "NAdam", "RAdam", "RMSprop", "Adagrad", "Adadelta", "LBFGS"]
