"""``python -m training``: the command line (:mod:`training.cli`)."""

import sys

from training.cli import main

if __name__ == "__main__":
    sys.exit(main())
