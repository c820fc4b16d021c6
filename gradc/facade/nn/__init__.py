"""``torch.nn`` of the facade: ``functional`` plus a few modules (Parameter, Linear, losses).

Imported as ``gradc.torch.nn`` (an alias, see ``gradc.facade.torch_modules``).
"""
from gradc.facade.nn import functional, init, utils  # noqa: F401 - torch.nn.init, torch.nn.utils
from gradc.facade.nn.containers import ModuleDict, ModuleList
from gradc.facade.nn.layers import (
                              AdaptiveAvgPool2d,
                              AvgPool2d,
                              BatchNorm1d,
                              BatchNorm2d,
                              Conv2d,
                              Dropout,
                              Embedding,
                              Flatten,
                              Identity,
                              LayerNorm,
                              LogSoftmax,
                              MaxPool2d,
                              Softmax,
                              Unflatten,
)
from gradc.facade.nn.layers_extra import (
                              ELU,
                              GELU,
                              AdaptiveAvgPool1d,
                              AvgPool1d,
                              Conv1d,
                              EmbeddingBag,
                              LeakyReLU,
                              MaxPool1d,
                              SiLU,
                              Softplus,
)
from gradc.facade.nn.losses import (
                              BCELoss,
                              BCEWithLogitsLoss,
                              CrossEntropyLoss,
                              HuberLoss,
                              L1Loss,
                              MSELoss,
                              NLLLoss,
                              SmoothL1Loss,
)
from gradc.facade.nn.modules import (
                              Linear,
                              Module,
                              Parameter,
                              ReLU,
                              Sequential,
                              Sigmoid,
                              Tanh,
)
from gradc.facade.nn.recurrent import GRU, LSTM, RNN, RNNBase
from gradc.facade.nn.recurrent_cells import GRUCell, LSTMCell, RNNCell, RNNCellBase

__all__ = ["BCELoss", "BCEWithLogitsLoss", "CrossEntropyLoss", "Linear", "MSELoss", "Module", "Parameter", "ReLU",
           "Sequential", "Sigmoid", "Tanh", "functional"]
__all__ += ["AdaptiveAvgPool2d", "AvgPool2d", "BatchNorm1d", "BatchNorm2d", "Conv2d", "Dropout", "Embedding", "Flatten",
            "HuberLoss", "Identity", "L1Loss", "LayerNorm", "LogSoftmax", "MaxPool2d", "ModuleDict", "ModuleList",
            "NLLLoss", "SmoothL1Loss", "Softmax", "Unflatten"]
__all__ += ["AdaptiveAvgPool1d", "AvgPool1d", "Conv1d", "ELU", "EmbeddingBag", "GELU", "LeakyReLU", "MaxPool1d",
            "SiLU", "Softplus"]
__all__ += ["GRU", "GRUCell", "LSTM", "LSTMCell", "RNN", "RNNBase", "RNNCell", "RNNCellBase"]
