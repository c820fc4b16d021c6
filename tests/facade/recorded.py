"""Torch 2.13.0's recorded behaviour (``spec/gen_<name>.py`` and ``spec/<name>.expected.txt``), for the tests
that compare the facade with it: the shared runner, a generator's cases and their recorded results."""
from __future__ import annotations

import importlib.util
import os

SPEC = os.path.join(os.path.dirname(__file__), "spec")


def load(name: str):
    """The module ``spec/<name>.py`` (the spec scripts are files, not a package)."""
    spec = importlib.util.spec_from_file_location(f"gradc_spec_{name}", os.path.join(SPEC, name + ".py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


RUNNER = load("spec_runner")


def recorded(name: str):
    """``(generator module, {case name: torch's recorded result})`` of ``spec/gen_<name>.py``."""
    return load(f"gen_{name}"), RUNNER.read_expected(os.path.join(SPEC, f"{name}.expected.txt"))
