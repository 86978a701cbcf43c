"""`python -m otel_scorers.cli`: the command line, as the `otel-scorers` script runs it."""

import sys

from otel_scorers.cli.main import main

sys.exit(main())
