import sys

from efu_monitor.cli import main

sys.exit(main())
