"""The report's SVG is well-formed XML whatever the report holds."""

from __future__ import annotations

from xml.etree import ElementTree

import learnloop
from learnloop.holdback.chart import report_svg


async def test_an_empty_report_draws_a_well_formed_picture_that_says_so(held_loop: learnloop.Loop) -> None:
    report = await held_loop.for_tenant("acme").holdback.report()
    drawing = report_svg(report)
    root = ElementTree.fromstring(drawing)
    texts = " ".join(node.text or "" for node in root.iter("{http://www.w3.org/2000/svg}text"))
    assert "Tenant acme" in texts and "No turns under an experiment yet." in texts
