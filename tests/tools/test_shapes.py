"""Free-text queries in shared call shapes: kept after the gate's redaction, literal values parameterised
(seed 001 §3.1 `query_templates.tool_parameters`: the proven query is the template; §8.10: no user's values)."""

from __future__ import annotations

import learnloop
from learnloop.tools.shapes import Redactor, Shaper, parameterise, query_fields, query_like

GRAPHQL = (
    '{ orders(first: 25, query: "created_at:>2026-05-01T00:00:00Z total_price:>$120.50 name:#1042") '
    "{ edges { node { id totalPriceSet { shopMoney { amount } } } } } }"
)


def test_a_proven_query_is_kept_with_its_literals_parameterised() -> None:
    shaper = Shaper(Redactor.default())
    shape = shaper.shape("shopify_graphql", {"query": GRAPHQL})
    assert shape["query"] == (
        '{ orders(first: <number>, query: "created_at:><date> total_price:><amount> name:<id>") '
        "{ edges { node { id totalPriceSet { shopMoney { amount } } } } } }"
    )
    assert shaper.shape("shopify_graphql", shape) == shape  # shaping twice changes nothing
    other_dates = GRAPHQL.replace("2026-05-01", "2025-01-31").replace("25", "10")
    assert shaper.signature("shopify_graphql", {"query": other_dates}) == shaper.signature(
        "shopify_graphql", {"query": GRAPHQL}
    )


def test_the_gate_redacts_inside_a_query_and_natural_text_stays_text() -> None:
    shaper = Shaper(Redactor.default())
    sql = "SELECT sum(total) FROM orders WHERE customer_id = 48213 AND email = 'bob@example.com'"
    kept = shaper.shape("sql", {"sql": sql})["sql"]
    assert "bob@example.com" not in kept and "48213" not in kept and kept.startswith("SELECT sum(total) FROM")
    assert shaper.shape("s", {"q": "created_at:>2026-05-01 status:open"}) == {"q": "created_at:><date> status:open"}
    assert shaper.shape("s", {"q": "top products for Alice"}) == {"q": "<text>"}
    assert shaper.shape("s", {"q": "note:buy milk"}) == {"q": "<text>"}
    assert not query_like("https://example.com/a:b") and query_like("{ shop { name } }")
    assert Shaper(None).shape("s", {"q": "{ shop { name } }"}) == {"q": "<text>"}  # no gate, nothing kept
    # Someone's words inside a query are data too: quoted phrases and names become <text>, the API's terms stay.
    assert shaper.shape("s", {"q": "customer:Alice status:paid"}) == {"q": "customer:<text> status:paid"}
    named = shaper.shape("g", {"q": '{ customers(query: "name:\'Alice Liddell\'", sort: "NAME") { id } }'})
    assert named == {"q": '{ customers(query: "<text>", sort: "NAME") { id } }'}
    assert shaper.shape("g", {"q": '{ product(handle: "blue-shirt") { title } }'})["q"].count("blue-shirt") == 1


def test_literals_and_fields() -> None:
    assert parameterise("id gid://shopify/Order/5512345 on 03/04/2026 for 12 EUR") == "id <id> on <date> for <amount>"
    assert parameterise("order ORD-88123 <redacted:secret.key> 7") == "order <id> <redacted:secret.key> <number>"
    assert query_fields(GRAPHQL) == ["orders", "edges", "node", "id", "totalPriceSet", "shopMoney", "amount"]


async def test_a_shared_template_keeps_the_proven_query(tools_loop: learnloop.Loop) -> None:
    tools = tools_loop.tools
    await tools.set_context("s1", "orders over 120 dollars since May", user="alice", intent="orders")
    await tools.record_call("s1", "translate_text", {"query": GRAPHQL})
    [template] = await tools.templates(user="bob", intent="orders")
    assert template.user is None and "totalPriceSet" in template.params["query"]
    assert "2026" not in template.params["query"] and "1042" not in template.params["query"]
