from .server import LearnloopMCP
from .server_auth import Principal as MCPPrincipal
from .server_run import serve as serve_mcp

__all__ = ["LearnloopMCP", "MCPPrincipal", "serve_mcp"]
