//! A PostgreSQL + pgvector tool store.
