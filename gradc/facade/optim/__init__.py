"""``torch.optim`` of the facade: SGD, Adam, AdamW, RMSprop, Adagrad and ``lr_scheduler``.

Imported as ``gradc.torch.optim`` (an alias, see ``gradc.facade.torch_modules``).

>>> import gradc.torch as torch
>>> model = torch.nn.Linear(2, 1)
>>> opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
>>> loss = model(torch.ones(4, 2)).pow(2).mean(); loss.backward(); opt.step(); opt.zero_grad()
>>> model.weight.grad is None
True
"""
from gradc.facade.optim import lr_scheduler
from gradc.facade.optim.adagrad import Adagrad
from gradc.facade.optim.adam import Adam, AdamW
from gradc.facade.optim.optimizer import Optimizer
from gradc.facade.optim.rmsprop import RMSprop
from gradc.facade.optim.sgd import SGD

__all__ = ["SGD", "Adagrad", "Adam", "AdamW", "Optimizer", "RMSprop", "lr_scheduler"]
