"""`python -m stallscan.guard [--mode observe|enforce] [--log PATH] ...`: the hook command (stallscan.guard.hook)."""

import sys

from stallscan.guard.hook import main

sys.exit(main())
