"""torch's module paths under ``gradc.torch``, and under ``torch`` where a harness sets
``sys.modules["torch"] = gradc.torch``, each in a fresh interpreter (this process's
``sys.modules`` is never touched: torch 2.13.0 may be installed and imported by other tests).

Every path must give the facade's module itself: one module object per file, whatever name
imported it (a second copy would hold other class objects: ``isinstance`` and ``is`` checks fail).
"""
import os
import pathlib
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]

FORMS = [
    "import gradc.torch as torch; torch.optim.SGD; torch.optim.lr_scheduler.StepLR; torch.utils.data.DataLoader",
    "from gradc.torch.optim import Adam, AdamW, RMSprop, Adagrad, SGD",
    "import gradc.torch.optim.lr_scheduler as S; S.CosineAnnealingLR",
    "from gradc.torch.optim.lr_scheduler import StepLR",
    "import gradc.torch.utils.data; gradc.torch.utils.data.TensorDataset",
    "from gradc.torch.utils.data import DataLoader, Dataset, random_split",
    "from gradc.torch.utils.data.dataloader import default_collate",
    "import gradc.torch as torch; assert not torch.cuda.is_available(); assert not torch.backends.mps.is_available()",
    "import gradc.torch.backends.mps, gradc.torch.backends.cudnn as c; assert not c.is_available()",
    "import gradc.torch.cuda; from gradc.torch import accelerator; accelerator.is_available()",
    "import gradc.torch as torch; torch.save; torch.load; torch.inference_mode; torch.device('cpu')",
    "import gradc.torch.nn.functional as F; F.relu; F.mse_loss",
    "from gradc.torch.autograd.functional import vjp, jvp, jacobian, hessian, hvp, vhp",
    "import gradc.torch.autograd.functional as AF; import gradc.torch as torch; assert AF is torch.autograd.functional",
    "import gradc.torch.func as func; from gradc.torch.func import vmap, grad, functional_call",
    "import gradc, gradc.torch as torch; assert gradc.torch is torch",
    "import gradc.torch as torch; assert len(torch.__all__) == len(set(torch.__all__)) and all(hasattr(torch, n) "
    "for n in torch.__all__)",
    "import gradc; gradc.torch.nn.Linear",  # gradc.torch on first use, as gradc.dask
]
HARNESS = "import sys, gradc.torch\nsys.modules['torch'] = gradc.torch\n"  # how tutorial runners substitute gradc
UNDER_TORCH_NAME = [
    "import torch.nn as nn; import torch.nn.functional as F\n"
    "assert nn is gradc.torch.nn and F is gradc.torch.nn.functional and nn.Module is gradc.torch.nn.Module",
    "import torch.nn\nimport torch.nn.functional\nassert torch.nn.functional.relu is gradc.torch.nn.functional.relu",
    "from torch.autograd import Function, grad\nassert Function is gradc.torch.autograd.Function",
    "from torch.autograd.functional import vjp, jvp, jacobian, hessian, hvp, vhp\n"
    "import torch.autograd.functional as AF\nassert AF is gradc.torch.autograd.functional and vjp is AF.vjp\n"
    "out, v = vjp(lambda x: (x ** 2).sum(), gradc.torch.tensor([1.0, 2.0]))\nassert v.tolist() == [2.0, 4.0]",
    "import torch.utils.data\nfrom torch.utils.data import DataLoader\n"
    "assert DataLoader is gradc.torch.utils.data.DataLoader",
    "from torch.optim import SGD\nimport torch.optim as optim\nassert optim is gradc.torch.optim and SGD is optim.SGD",
    "from torch.optim.lr_scheduler import StepLR; import torch.utils.data.dataloader",
    "import torch.func\nfrom torch.func import vmap, grad\nassert torch.func is gradc.torch.func",
    "import torch.backends.mps, torch.backends.cudnn\nassert not torch.backends.mps.is_available()",
    "import torch.cuda, torch.accelerator\nassert not torch.cuda.is_available()",
    "import torch\nassert torch.tensor([1.0]).tolist() == [1.0] and torch.compile is gradc.torch.compile",
    "import torch\nassert torch.__version__ == '2.13.0'",
    "assert gradc.torch.nn.__spec__.name == 'gradc.facade.nn'\nimport torch.nn\nassert gradc.torch.nn.__spec__.name == "
    "'gradc.facade.nn'",
    "try:\n    import torch.nonexistent\nexcept ModuleNotFoundError as e:\n    assert 'torch.nonexistent' in str(e)\n"
    "else:\n    raise AssertionError",
    "try:\n    import torch.autograd.nonexistent\nexcept ModuleNotFoundError as e:\n"
    "    assert 'torch.autograd.nonexistent' in str(e)\nelse:\n    raise AssertionError",
]
# after any form: every registered path is its facade module, and every facade module was loaded once
SAME = ("import sys, gradc.torch\nfrom gradc.facade.torch_modules import ALIASES\n"
        "assert all(sys.modules[a] is sys.modules[t] for a, t in ALIASES.items())\n"
        "assert gradc.torch.optim.SGD is sys.modules['gradc.facade.optim.sgd'].SGD\n"
        "mods = {id(m): getattr(m, '__file__', None) or '' for m in list(sys.modules.values())}\n"
        "files = [f for f in mods.values() if f.startswith(gradc.facade.__path__[0])]\n"
        "assert len(files) == len(set(files)), 'a facade file was loaded twice'\n")


def _run(code):
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=ROOT)


@pytest.mark.parametrize("form", FORMS)
def test_form_in_fresh_interpreter(form):
    proc = _run(form + "\n" + SAME)
    assert proc.returncode == 0, proc.stderr


@pytest.mark.parametrize("form", UNDER_TORCH_NAME)
def test_submodules_import_when_gradc_torch_stands_in_for_torch(form):
    proc = _run(HARNESS + form + "\n" + SAME)
    assert proc.returncode == 0, proc.stderr


def test_modules_are_one_object_under_every_name():
    """Each torch path, imported under ``gradc.torch`` and ``torch``, is the facade module itself (all of them)."""
    code = HARNESS + (
        "import importlib\nfrom gradc.facade.torch_modules import ALIASES\n"
        "for alias, target in ALIASES.items():\n"
        "    path = alias[len('gradc.torch.'):]\n"
        "    m = importlib.import_module(target)\n"
        "    assert importlib.import_module(alias) is m, alias\n"
        "    assert importlib.import_module('torch.' + path) is m, path\n"
        "    assert eval('torch.' + path, {'torch': gradc.torch}) is m, path\n"
        "print(len(ALIASES))\n")
    proc = _run(code)
    assert proc.returncode == 0, proc.stderr
    assert int(proc.stdout) > 30  # every file of nn, optim, utils.data: not only the roots


def test_finder_leaves_other_imports_alone():
    """With nothing standing in for torch, the finder answers for no name (real torch, if installed, imports)."""
    code = ("import sys, gradc.torch\nfrom gradc.facade.torch_modules import AliasFinder\n"
            "finder = next(f for f in sys.meta_path if isinstance(f, AliasFinder))\n"
            "assert finder.find_spec('torch.nn') is None and finder.find_spec('gradc.nn') is None\n"
            "assert finder.find_spec('json.decoder') is None\n"
            "sys.modules['pt'] = gradc.torch\nassert finder.find_spec('pt.nn') is not None\n"
            "assert finder.find_spec('pt.nonexistent') is None\n")
    proc = _run(code)
    assert proc.returncode == 0, proc.stderr


def test_real_torch_is_untouched_by_gradc_torch():
    """Importing gradc.torch beside real torch changes none of torch's modules."""
    pytest.importorskip("torch")
    code = ("import torch, torch.nn.functional, gradc.torch\nimport torch.autograd.functional as AF\n"
            "assert torch.__name__ == 'torch' and 'gradc' not in torch.nn.__file__ and 'gradc' not in AF.__file__\n"
            "assert gradc.torch.nn is not torch.nn\n")
    proc = _run(code)
    assert proc.returncode == 0, proc.stderr
