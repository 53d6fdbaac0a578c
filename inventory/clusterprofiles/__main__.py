import sys

from inventory.clusterprofiles.cli import main

sys.exit(main())
