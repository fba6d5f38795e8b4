"""``python -m gatesh`` behaves as the ``gatesh`` executable."""

import sys

from gatesh._entry import main

sys.exit(main(["gatesh", *sys.argv[1:]]))
