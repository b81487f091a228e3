"""The journal: the hash-chained, fsync'd SQLite store per table, its outbox, anchors, rotation and
retention."""
