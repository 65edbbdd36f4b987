"""Search that is not about SQL, for every backend: in-memory partitions of live learnings (exact vectors or
HNSW, BM25 over compressed postings, the columns ranking reads) and the cache that loads, catches up and evicts
them; the tool router's per-tenant index, its upkeep from the change log, a route's evidence and the templates
a query is about; and the fusion of vector and keyword hits into ranking candidates. A backend keeps these
current from its own storage and change log through small source protocols (`PartitionSource`,
`ToolChangeSource`); what it stores and how it reads are its own."""
