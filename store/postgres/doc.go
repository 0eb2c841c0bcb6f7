// Package postgres is the store wilco uses when several nodes share the
// work: the event log and the records of any number of repositories in one
// PostgreSQL database, through github.com/jackc/pgx/v5.
//
// # Repositories and leases
//
// Every table is keyed by repository, so one database serves many. For
// each repository one node at a time holds the lease (wilco_leases): Open
// connects without it, Acquire takes it when it is free, expired or
// released, and Renew extends it. Each acquisition raises the lease's
// fencing token, and every Commit carries the token it was made under:
// the database refuses the batch (ErrFenced) unless that token still holds
// an unexpired lease, checked inside the same transaction as the write,
// with the lease's row locked for the rest of it. A node paused or cut off
// past its lease can therefore never write again after another node took
// over, whatever its own clock says: lease times are the database's clock.
//
// # Writing
//
// Commit sends the whole batch in one round trip: a pipeline of statements
// (the fence check, the events, the records, the deletes, the watermark)
// that the server runs as one implicit transaction, all or nothing. Rows go
// in through unnest of arrays, one statement per kind whatever the batch's
// size. The runtime gathers many turns' events in one Commit (group
// commit), and answers nobody before Commit returns, that is before the
// transaction is committed; with the server's default synchronous_commit
// that means flushed to its WAL.
//
// # Reading
//
// Reads need no lease: standby nodes read the log and the records while
// another node writes. Load reads the watermark and the records in one
// repeatable-read transaction, so the two agree; Scan reads in chunks with
// no query open while its callback runs.
//
// # Schema
//
// Migrations are SQL files embedded in the binary (migrations/NNNN_*.sql),
// applied in order on Open under an advisory lock, so that nodes starting
// together apply each once; wilco_schema_version records them, and a
// database migrated by a newer wilco is refused rather than misread.
//
//	wilco_events(repo, seq, time, type, task_id, agent, data)   PRIMARY KEY (repo, seq)
//	wilco_records(repo, kind, id, state, agent, task_id, data)  PRIMARY KEY (repo, kind, id)
//	wilco_meta(repo, key, value)                                PRIMARY KEY (repo, key)
//	wilco_leases(repo, holder, url, token, acquired_at, renewed_at, expires_at)
//	wilco_nodes(node, repo, url, version, started_at, seen_at)
//
// time is Unix nanoseconds (NULL for the zero time), so that times come
// back to the nanosecond; text columns compare byte by byte (COLLATE "C").
//
// # Tests
//
// Package pgtemp starts a throw-away server from Debian's postgresql
// package for the tests; the store passes the conformance suite of
// store/storetest.
package postgres
