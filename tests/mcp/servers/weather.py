"""A small real MCP server (stdio) for the proxy tests: weather tools."""

from mcp.server import MCPServer

app = MCPServer("weather")


@app.tool()
def get_forecast(city: str) -> str:
    """Weather forecast for a city for the next three days: temperature, rain and wind."""
    return f"{city}: sunny, 21 °C, light wind"


@app.tool()
def air_quality(zip_code: str) -> str:
    """Air quality index and pollen forecast for a US zip code."""
    return f"AQI for {zip_code}: 42 (good)"


@app.tool()
def sunrise_times(city: str) -> str:
    """Sunrise and sunset times for a city today."""
    return f"{city}: sunrise 06:12, sunset 20:41"


@app.tool()
def status() -> str:
    """Health of the weather service."""
    return "weather ok"


if __name__ == "__main__":
    app.run()
