-- Every commit that appends events rings the processes listening on 'learnloop_events' (LISTEN/NOTIFY), once
-- per tenant and user it wrote for: the payload is the tenant and the user id ('' for tenant-wide events)
-- joined by the unit separator (chr 31). The notification is delivered at commit, and only then: a stream
-- woken by it reads the committed events from the table, so it stays the source of truth.
CREATE FUNCTION events_notify() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('learnloop_events', owner.tenant || chr(31) || owner.user_id)
    FROM (SELECT DISTINCT tenant, user_id FROM added) AS owner;
    RETURN NULL;
END $$;

CREATE TRIGGER events_notify AFTER INSERT ON events
REFERENCING NEW TABLE AS added
FOR EACH STATEMENT EXECUTE FUNCTION events_notify();
