# pytest setup: the package from the build tree (PYTHONPATH=build/python, as ctest sets it;
# build/python is tried when unset) and the shared data directory (TESSEL_DATA_DIR, else
# ../shared/data next to the repository).
import os
import sys

import pytest

_here = os.path.dirname(os.path.abspath(__file__))
_root = os.path.dirname(os.path.dirname(_here))
try:
    import tessel  # noqa: F401
except ImportError:
    sys.path.insert(0, os.path.join(_root, "build", "python"))


@pytest.fixture(scope="session")
def data_dir():
    d = os.environ.get("TESSEL_DATA_DIR") or os.path.join(_root, "..", "shared", "data")
    return os.path.abspath(d)


@pytest.fixture(scope="session")
def matrices_dir(data_dir):
    d = os.path.join(data_dir, "matrices")
    if not os.path.isdir(d):
        pytest.skip("no shared matrices at " + d)
    return d
