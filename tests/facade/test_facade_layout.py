"""The facade's import paths (torch's module paths) and its one internal rule that tests/test_layers.py
cannot see: ``tensor.py`` sits below everything that records graph nodes."""
import ast
import os
import pathlib
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
FACADE = ROOT / "gradc" / "facade"

IMPORT_FORMS = {
    "import gradc.torch as torch": "torch.nn.Linear(2, 1); torch.autograd.grad; torch.nn.functional.mse_loss",
    "import gradc.torch.autograd": "gradc.torch.autograd.grad; gradc.torch.autograd.Function",
    "from gradc.torch import autograd": "autograd.backward",
    "import gradc.torch.nn": "gradc.torch.nn.Linear; gradc.torch.nn.functional.relu",
    "from gradc.torch import nn": "nn.Module; nn.functional.relu",
    "from gradc.torch.nn import Linear, functional": "Linear(2, 1); functional.relu",
    "import gradc.torch.nn.functional as F": "F.relu; F.binary_cross_entropy_with_logits",
    "from gradc.torch.nn.functional import mse_loss": "mse_loss",
    "import gradc.torch.nn.modules": "gradc.torch.nn.modules.Linear",
}
SAME_OBJECTS = (
    "import sys, gradc.torch, gradc.facade.nn.modules\n"
    "from gradc.facade.torch_modules import ALIASES\n"
    "assert all(sys.modules[a] is sys.modules[t] for a, t in ALIASES.items())\n"
    "assert gradc.torch.nn.Linear is gradc.facade.nn.modules.Linear\n"
    "assert gradc.torch.nn is sys.modules['gradc.torch.nn'] is sys.modules['gradc.facade.nn']\n"
)


def _run(code):
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=ROOT)


@pytest.mark.parametrize("form", sorted(IMPORT_FORMS))
def test_import_form_in_fresh_interpreter(form):
    proc = _run(form + "\n" + IMPORT_FORMS[form] + "\n" + SAME_OBJECTS)
    assert proc.returncode == 0, proc.stderr


def test_aliased_packages_list_every_submodule():
    # an unlisted submodule of an aliased package would load a second copy (other class objects)
    from gradc.facade.torch_modules import ALIASES

    for alias, target in ALIASES.items():
        folder = ROOT.joinpath(*target.split("."))
        for sub in folder.glob("*.py") if folder.is_dir() else ():
            if sub.stem != "__init__":
                assert alias + "." + sub.stem in ALIASES, f"{alias}.{sub.stem} is not in torch_modules.ALIASES"


def _module_name(path):
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path):
    """Every gradc module ``path`` imports, at the top or inside a function."""
    name = _module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join(package.split(".")[: len(package.split(".")) - node.level + 1] + [base]).strip(".")
            for a in node.names:
                sub = base + "." + a.name
                is_module = ROOT.joinpath(*sub.split(".")).with_suffix(".py").exists() or \
                    ROOT.joinpath(*sub.split(".")).is_dir()
                found.add(sub if is_module else base)
    return {m for m in found if m == "gradc" or m.startswith("gradc.")}


def test_tensor_module_imports_no_recording_layer():
    imported = _imports(FACADE / "tensor.py")
    assert imported <= {"gradc.facade.dtypes", "gradc.facade.grad_mode", "gradc.facade.tensor_str"}, imported
