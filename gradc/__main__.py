"""``python -m gradc``: the same as the ``gradc`` command."""
import sys

from gradc.cli import main

if __name__ == "__main__":
    sys.exit(main())
