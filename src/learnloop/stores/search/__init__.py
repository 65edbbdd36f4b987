"""Search that is not about SQL, for every backend: in-memory partitions of live learnings (exact vectors or
HNSW, BM25 over compressed postings, the columns ranking reads), the tool router's index, and the fusion of
vector and keyword hits into ranking candidates. A backend keeps these current from its own storage and
change log; what it stores and how it reads are its own."""
