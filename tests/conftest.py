"""Shared test setup: make gradc importable from a checkout, and the ``--update-golden`` option."""
import os
import sys

import pytest

try:
    import gradc  # noqa: F401
except ImportError:  # running from a checkout without an install
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def pytest_addoption(parser):
    parser.addoption("--update-golden", action="store_true", default=False,
                     help="rewrite the golden files in tests/golden/ instead of comparing against them")


@pytest.fixture
def update_golden(request):
    return request.config.getoption("--update-golden")
