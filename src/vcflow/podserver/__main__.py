"""`python -m vcflow.podserver`: the pod server's process entry (`server.main`)."""

import sys

from vcflow.podserver.server import main

sys.exit(main())
