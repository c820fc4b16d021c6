"""``torch.nn`` of the facade: ``functional`` plus a few modules (Parameter, Linear, losses)."""
from gradc.nn import functional
from gradc.nn.modules import (
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
