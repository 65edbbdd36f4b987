"""learnloop as a service: REST API with tenant keys, the live event stream and the review pages.

Needs the `server` extra (FastAPI, uvicorn, Jinja2): `pip install 'learnloop[server]'`.
"""

from .app import create_app
from .state import ServiceOptions

__all__ = ["ServiceOptions", "create_app"]
