"""Each domain error maps to one HTTP status."""

from __future__ import annotations

import pytest

from chronomem.errors import (
    ChronomemError,
    ConfigurationError,
    ConflictError,
    InvalidInputError,
    ModelOutputError,
    NotFoundError,
    StoreUnavailableError,
)
from chronomem.service.errors import AuthenticationError, status_for


@pytest.mark.parametrize(
    ("error", "status"),
    [
        (AuthenticationError("x"), 401), (InvalidInputError("x"), 422), (NotFoundError("x"), 404),
        (ConflictError("x"), 409), (StoreUnavailableError("x"), 503), (ConfigurationError("x"), 503),
        (ModelOutputError("x"), 502), (ChronomemError("x"), 500),
    ],
)
def test_each_domain_error_has_one_status(error, status):
    assert status_for(error) == status
