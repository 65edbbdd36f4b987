"""What the SQL backends share: the statements and row mapping of the `Store` contract, written once against a
`Connection` (DB-API shaped, `?` placeholders) and a small `Dialect` for what truly differs between them.

A backend supplies a connection whose class names its dialect, the schema (its migrations) and its plumbing
(threads, pools, errors); the SQL it shares with the others lives here.
"""
