from __future__ import annotations

from collections.abc import Iterator

import pytest

from learnloop.channels import RetryPolicy

from .platforms import FakePlatform

# retries in tests wait milliseconds, not seconds; nothing asserts on time
FAST = RetryPolicy(max_attempts=3, backoff_base=0.001, backoff_max=0.005, max_retry_after=0.01, timeout=10.0)


@pytest.fixture
def platform() -> Iterator[FakePlatform]:
    with FakePlatform() as server:
        yield server
