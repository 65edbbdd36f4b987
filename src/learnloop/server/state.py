"""The service's shared parts, kept on `app.state.service` for routes and pages."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from fastapi import Request
from fastapi.templating import Jinja2Templates

from ..channels.base import ChannelAdapter
from ..channels.registry import adapter_for
from ..channels.responders import Responder
from ..channels.settings import ChannelSettings
from ..errors import NotConfigured
from ..loop import Loop
from ..stores.service import ServiceStore
from .import_jobs import DEFAULT_IMPORT_LIMITS, ImportJobs, ImportLimit
from .keys import KeyRing

__all__ = ["Service", "ServiceOptions", "get_service", "service_store_for"]


@dataclass(frozen=True)
class ServiceOptions:
    # How often an open event stream reads the event log for events written by other processes.
    poll_interval: float = 1.0
    # Seconds without events after which a stream sends a comment, so proxies keep the connection open.
    heartbeat: float = 15.0
    # Set the cookie's Secure flag (behind HTTPS).
    secure_cookies: bool = False
    # Largest request body of any route, in bytes, but import (a 413 before the body is read whole).
    max_body_bytes: int = 2 * 1024 * 1024
    # What one import may carry, per key role: (bytes, lines).
    import_limits: Mapping[str, ImportLimit] = field(default_factory=lambda: dict(DEFAULT_IMPORT_LIMITS))
    # Channels: the platforms' tokens and webhook secrets, and the app's agent that answers their messages.
    channels: ChannelSettings = field(default_factory=ChannelSettings)
    responder: Responder | None = None

    @property
    def max_import_bytes(self) -> int:
        return max(size for size, _ in self.import_limits.values())


@dataclass
class Service:
    loop: Loop
    store: ServiceStore
    templates: Jinja2Templates
    options: ServiceOptions = field(default_factory=ServiceOptions)
    keys: KeyRing = field(init=False)
    imports: ImportJobs = field(init=False)
    adapters: dict[str, ChannelAdapter] = field(init=False, default_factory=dict)

    def __post_init__(self) -> None:
        self.keys = KeyRing(self.store)
        self.imports = ImportJobs.beside(str(getattr(self.loop.engine.store, "path", ":memory:")))

    def adapter(self, channel: str) -> ChannelAdapter:
        """One adapter per channel for the service's life: they hold the platforms' connection pools."""
        if channel not in self.adapters:
            self.adapters[channel] = adapter_for(channel, self.options.channels)
        return self.adapters[channel]

    def responder(self) -> Responder:
        if self.options.responder is None:
            raise NotConfigured("no responder: set LEARNLOOP_CHANNEL_RESPONDER (llm, http:<url>, python:…)")
        return self.options.responder

    async def close_adapters(self) -> None:
        for adapter in self.adapters.values():
            close = getattr(adapter, "aclose", None)
            if close is not None:
                await close()
        self.adapters.clear()


def get_service(request: Request) -> Service:
    service: Service = request.app.state.service
    return service


def service_store_for(loop: Loop) -> ServiceStore:
    """Keys and counters live next to the learnings, in the backend's service part."""
    store = loop.engine.service
    if store is None:
        raise NotConfigured(f"the service needs a store that keeps API keys, got {loop.engine.store!r}")
    return store
