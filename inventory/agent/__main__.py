"""`python -m inventory.agent`: see docs/agent.md."""
import sys

from inventory.agent.cli import main

sys.exit(main())
