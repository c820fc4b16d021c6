"""torch's module paths for optim, utils.data, cuda and accelerator import in a fresh interpreter."""
import os
import pathlib
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]

FORMS = [
    "import gradc as torch; torch.optim.SGD; torch.optim.lr_scheduler.StepLR; torch.utils.data.DataLoader",
    "from gradc.optim import Adam, AdamW, RMSprop, Adagrad, SGD",
    "import gradc.optim.lr_scheduler as S; S.CosineAnnealingLR",
    "from gradc.optim.lr_scheduler import StepLR",
    "import gradc.utils.data; gradc.utils.data.TensorDataset",
    "from gradc.utils.data import DataLoader, Dataset, random_split",
    "from gradc.utils.data.dataloader import default_collate",
    "import gradc as torch; assert not torch.cuda.is_available(); assert not torch.backends.mps.is_available()",
    "import gradc.cuda; from gradc import accelerator; accelerator.is_available()",
    "import gradc as torch; torch.save; torch.load; torch.inference_mode; torch.device('cpu')",
]
HARNESS = "import sys, gradc\nsys.modules['torch'] = gradc\n"  # how tutorial runners substitute gradc
UNDER_TORCH_NAME = [
    "import torch.nn as nn; import torch.nn.functional as F; assert nn is gradc.nn and F is gradc.nn.functional",
    "from torch.utils.data import DataLoader; import torch.optim as optim; assert optim is gradc.optim",
    "from torch.optim.lr_scheduler import StepLR; import torch.utils.data.dataloader",
    "assert gradc.nn.__spec__.name == 'gradc.facade.nn'\nimport torch.nn\nassert gradc.nn.__spec__.name == "
    "'gradc.facade.nn'",
    "try:\n    import torch.nonexistent\nexcept ModuleNotFoundError as e:\n    assert 'torch.nonexistent' in str(e)\n"
    "else:\n    raise AssertionError",
]
SAME = ("import sys, gradc\nfrom gradc.facade.torch_modules import ALIASES\n"
        "assert all(sys.modules[a] is sys.modules[t] for a, t in ALIASES.items())\n"
        "assert gradc.optim.SGD is sys.modules['gradc.facade.optim.sgd'].SGD\n")


def _run(code):
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=ROOT)


@pytest.mark.parametrize("form", FORMS)
def test_form_in_fresh_interpreter(form):
    proc = _run(form + "\n" + SAME)
    assert proc.returncode == 0, proc.stderr


@pytest.mark.parametrize("form", UNDER_TORCH_NAME)
def test_submodules_import_when_gradc_stands_in_for_torch(form):
    proc = _run(HARNESS + form + "\n" + SAME)
    assert proc.returncode == 0, proc.stderr
