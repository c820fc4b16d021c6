"""``torch.nn`` of the facade: ``functional`` plus a few modules (Parameter, Linear, losses).

Imported as ``gradc.nn`` (an alias, see ``gradc.facade.torch_modules``).
"""
from gradc.facade.nn import functional
from gradc.facade.nn.modules import (
                              BCELoss,
                              BCEWithLogitsLoss,
                              CrossEntropyLoss,
                              Linear,
                              Module,
                              MSELoss,
                              Parameter,
                              ReLU,
                              Sequential,
                              Sigmoid,
                              Tanh,
)

__all__ = ["BCELoss", "BCEWithLogitsLoss", "CrossEntropyLoss", "Linear", "MSELoss", "Module", "Parameter", "ReLU",
           "Sequential", "Sigmoid", "Tanh", "functional"]
