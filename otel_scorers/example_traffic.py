"""`python -m otel_scorers.example_traffic`, as earlier releases documented it:
`python -m otel_scorers.demos.example_traffic`."""

import sys

from otel_scorers.demos.example_traffic import TrafficSent, main, send_traffic

__all__ = ["TrafficSent", "main", "send_traffic"]

if __name__ == "__main__":
    sys.exit(main())
