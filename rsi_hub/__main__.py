import sys

from rsi_hub.cli import main

sys.exit(main())
