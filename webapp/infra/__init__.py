"""Infrastructure: database settings and write locks, Redis and the RQ queue, logs, pagination."""
