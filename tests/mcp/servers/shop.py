"""A small real MCP server (stdio) for the proxy tests: store analytics, with seed 001's sort-key mistake."""

from mcp.server import MCPServer
from mcp.server.mcpserver.exceptions import ToolError

app = MCPServer("shop")

PRODUCT_SORT_KEYS = ("BEST_SELLING", "CREATED_AT", "PRICE", "TITLE")


@app.tool()
def shop_analytics(resource: str, sort_key: str, limit: int = 10) -> str:
    """Analytics over the store's products, orders or customers, sorted by a sort key."""
    if resource == "products" and sort_key not in PRODUCT_SORT_KEYS:
        raise ToolError(f"Invalid sort key {sort_key} for products; valid: {', '.join(PRODUCT_SORT_KEYS)}")
    return f"top {limit} {resource} by {sort_key}: widget, gadget, gizmo"


@app.tool()
def list_orders(days: int = 7) -> str:
    """Recent orders of the store with their totals and status."""
    return f"{3 * days} orders in the last {days} days"


@app.tool()
def refund_order(order_id: str) -> str:
    """Refund a customer's order by its id."""
    return f"order {order_id} refunded"


@app.tool()
def status() -> str:
    """Health of the shop service."""
    return "shop ok"


if __name__ == "__main__":
    app.run()
