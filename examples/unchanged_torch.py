"""Code written for PyTorch, run on gradc's Tensor facade unchanged: one line binds the name ``torch``.

``sys.modules["torch"] = gradc.torch`` is how tutorial runners and benchmark harnesses (GradBench's
PyTorch tools) substitute a module for torch: every ``import torch...`` after it, submodules
included, gets the facade's modules. ``--torch`` runs the same code on PyTorch itself (the
output is the same, line for line).
"""
import sys

if "--torch" not in sys.argv:
    import gradc.torch

    sys.modules["torch"] = gradc.torch

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402
from torch import nn  # noqa: E402
from torch.autograd.functional import hessian, vjp  # noqa: E402
from torch.utils.data import DataLoader, TensorDataset  # noqa: E402


def rosenbrock(x):
    return ((1 - x[:-1]) ** 2 + 100 * (x[1:] - x[:-1] ** 2) ** 2).sum()


x = torch.tensor([0.5, -0.3, 1.2], dtype=torch.float64)
value, gradient = vjp(rosenbrock, x)
print(f"rosenbrock {value.item():.4f}, gradient {[round(g, 6) for g in gradient.tolist()]}")
print(hessian(rosenbrock, x))

torch.manual_seed(0)
features, targets = torch.randn(32, 2), torch.randint(0, 2, (32,))
model = nn.Sequential(nn.Linear(2, 4), nn.Tanh(), nn.Linear(4, 2))
optimizer = torch.optim.Adam(model.parameters(), lr=0.1)
for epoch in range(3):
    for xb, yb in DataLoader(TensorDataset(features, targets), batch_size=8, shuffle=True):
        loss = F.cross_entropy(model(xb), yb)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    print(f"epoch {epoch}: loss {loss.item():.4f}")
