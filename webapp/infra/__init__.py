"""Infrastructure every layer above stands on: database settings and write locks, Redis and the RQ
queue, the embedded Redis server, the log format, pagination of queries."""
