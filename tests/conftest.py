"""Shared test setup: make gradc importable from a checkout, and the ``--update-golden`` option."""
import os
import sys

import pytest

# the slow-compile notice (gradc.stages) depends on the speed of the machine: never in the suite, whose tests read
# stderr (tests/test_stages.py sets the threshold itself); the processes the tests start inherit the variable
os.environ["GRADC_NOTICE_AFTER"] = "never"

try:
    import gradc  # noqa: F401
except ImportError:  # running from a checkout without an install
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import gradc.stages  # noqa: E402 - after the path is set

gradc.stages.NOTICE_AFTER = None  # pytest imported gradc before this file (the filterwarnings option names its warning)


def pytest_addoption(parser):
    parser.addoption("--update-golden", action="store_true", default=False,
                     help="rewrite the golden files in tests/golden/ instead of comparing against them")


@pytest.fixture
def update_golden(request):
    return request.config.getoption("--update-golden")
