"""``python -m ascend_ops.common`` runs the ``ascend-ops`` command line."""

import sys

from .cli import main

sys.exit(main())
