"""Adapters for agent frameworks: each runs one agent run as one `loop.turn()`.

Import the one you use; each needs its extra and imports its framework only when imported itself:

    from learnloop.adapters.openai_agents import run_turn      # pip install 'learnloop[openai-agents]'
    from learnloop.adapters.pydantic_ai import run_turn        # pip install 'learnloop[pydantic-ai]'
"""

__all__: list[str] = []
