"""`/api/holdback`: the report and its chart for tenant keys, settings and pins for admin keys, typed errors."""

from __future__ import annotations

from tests.server.conftest import RunningServer

TENANT = "holdback-api"


def test_settings_pins_and_the_report_over_http(service: RunningServer) -> None:
    admin, app = service.key(TENANT, "admin"), service.key(TENANT, "app")
    user = service.key(TENANT, "user", user="alice")
    with service.client(admin) as c:
        empty = c.get("/api/holdback").json()
        assert empty["experiments"] == [] and empty["verdict"].startswith("No turns under a holdback experiment")
        shown = c.put("/api/holdback/settings", json={"share": 0.25, "mode": "aa"}).json()
        assert shown["settings"][0] | {"updated_at": None} == {
            "namespace": None,
            "share": 0.25,
            "mode": "aa",
            "enabled": True,
            "salt": "",
            "updated_at": None,
        }
        assert c.put("/api/holdback/pins/alice", json={"arm": "holdback"}).json()["pins"] == {"alice": "holdback"}
        assert c.delete("/api/holdback/pins/alice").json()["pins"] == {}
        bad = c.put("/api/holdback/settings", json={"share": 1.5})
        assert bad.status_code == 422 and bad.json()["error"]["message"]
        assert c.put("/api/holdback/pins/alice", json={"arm": "maybe"}).status_code == 422
        chart = c.get("/api/holdback/chart.svg", params={"seed": 4})
        assert chart.status_code == 200 and chart.headers["content-type"].startswith("image/svg+xml")
        assert chart.text.startswith("<svg")
        assert c.get("/api/holdback", params={"resamples": 5}).status_code == 422
    with service.client(app) as c:
        assert c.get("/api/holdback/settings").json()["settings"][0]["mode"] == "aa"
        assert c.put("/api/holdback/settings", json={"share": 0.1}).status_code == 403
        assert c.get("/api/holdback").status_code == 200
    with service.client(user) as c:
        assert c.get("/api/holdback").status_code == 403  # other users' outcomes are not a user key's to see
    with service.client(service.key("holdback-api-other", "admin")) as c:
        assert c.get("/api/holdback/settings").json() == {"settings": [], "pins": {}}
