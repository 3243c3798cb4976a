"""Building the FalkorDB client: no server needed, so a redis-py release that changes the client's
construction rules is caught here before any integration test runs."""

from __future__ import annotations

import warnings

import pytest

from chronomem.store.falkordb.connection import ConnectionSettings, FalkorConnection

redis_asyncio_retry = pytest.importorskip("redis.asyncio.retry")


@pytest.mark.parametrize("cluster", [False, True], ids=["server", "cluster"])
async def test_the_client_is_built_with_the_asyncio_retry_type_and_no_warning(cluster: bool) -> None:
    # redis 8.2 warns when a synchronous redis.retry.Retry is handed to an asyncio client; the
    # suite turns warnings into errors, so the warning alone broke every FalkorDB path.
    settings = ConnectionSettings(port=1, cluster=cluster)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        connection = FalkorConnection.open(settings)
    try:
        client = connection._client
        retry = client.retry if cluster else client.connection_pool.connection_kwargs["retry"]
        assert isinstance(retry, redis_asyncio_retry.Retry)
    finally:
        if not cluster:
            await connection.close()
