"""The v4 routes, one module per SDK client."""
