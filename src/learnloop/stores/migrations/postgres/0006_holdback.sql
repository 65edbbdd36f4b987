-- The holdback experiment (`learnloop.holdback`): does memory make the agent better for a tenant's own users?
-- One settings row per tenant (namespace '') and optionally per namespace: whether it runs, the share of users
-- held back (they get no memory in their context), the mode ('holdback', or 'aa': both arms get memory, to
-- check that the report finds no effect where there is none) and a salt that re-draws the arms.
CREATE TABLE holdback_settings (
    tenant     TEXT    NOT NULL,
    namespace  TEXT    NOT NULL DEFAULT '',
    enabled    BIGINT  NOT NULL DEFAULT 1,
    share      DOUBLE PRECISION NOT NULL,
    mode       TEXT    NOT NULL CHECK (mode IN ('holdback', 'aa')),
    salt       TEXT    NOT NULL DEFAULT '',
    updated_at DOUBLE PRECISION NOT NULL,
    PRIMARY KEY (tenant, namespace)
);

-- A user pinned to an arm, whatever the hash says (a tester who must see memory, a customer who must not).
CREATE TABLE holdback_pins (
    tenant    TEXT NOT NULL,
    user_id   TEXT NOT NULL,
    arm       TEXT NOT NULL CHECK (arm IN ('memory', 'holdback')),
    pinned_at DOUBLE PRECISION NOT NULL,
    PRIMARY KEY (tenant, user_id)
);
