package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"time"
)

// migration is one step of the schema. Steps are never edited once released:
// a change to the schema is a new step with the next version.
type migration struct {
	version int
	name    string
	sql     string
}

// migrations, in order; migrations[i].version == i+1.
var migrations = []migration{
	{
		version: 1,
		name:    "events, records and meta",
		sql: `
CREATE TABLE events (
	seq     INTEGER PRIMARY KEY,
	time    INTEGER,
	type    TEXT NOT NULL,
	task_id TEXT NOT NULL,
	agent   TEXT NOT NULL,
	data    BLOB
) STRICT;
CREATE INDEX events_task ON events (task_id) WHERE task_id != '';
-- No index on agent: maintaining it cost a tenth of the delivery
-- throughput, and an agent's events are read from a seq on (a stream that
-- resumes), which the primary key serves.

CREATE TABLE records (
	kind    TEXT NOT NULL,
	id      TEXT NOT NULL,
	state   TEXT NOT NULL,
	agent   TEXT NOT NULL,
	task_id TEXT NOT NULL,
	data    BLOB
) STRICT;
-- A rowid table with a small unique index on the key: an entity's record is
-- rewritten in place, and the index entries are small, so checkpoints of
-- many entities in id order that is not insertion order stay cheap. Listing
-- by state scans a kind (it serves tools, not the hot path).
CREATE UNIQUE INDEX records_key ON records (kind, id);

CREATE TABLE meta (
	key   TEXT PRIMARY KEY,
	value ANY
) STRICT, WITHOUT ROWID;
`,
	},
}

// migrate brings the database up to the latest schema version, one
// transaction per step, on the writer connection. It refuses a database
// newer than this code.
func migrate(ctx context.Context, db *sql.DB) error {
	if _, err := db.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_version (
	version    INTEGER PRIMARY KEY,
	name       TEXT NOT NULL,
	applied_at INTEGER NOT NULL
) STRICT`); err != nil {
		return fmt.Errorf("create schema_version: %w", err)
	}
	var current int
	if err := db.QueryRowContext(ctx, `SELECT coalesce(max(version), 0) FROM schema_version`).Scan(&current); err != nil {
		return fmt.Errorf("read schema version: %w", err)
	}
	latest := migrations[len(migrations)-1].version
	if current > latest {
		return fmt.Errorf("schema version %d is newer than this wilco knows (%d): upgrade wilco", current, latest)
	}
	for _, m := range migrations[current:] {
		if err := apply(ctx, db, m); err != nil {
			return fmt.Errorf("migration %d (%s): %w", m.version, m.name, err)
		}
	}
	return nil
}

func apply(ctx context.Context, db *sql.DB, m migration) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback() //nolint:errcheck // a no-op after Commit
	// Another process may have migrated between our read and this
	// (immediate) transaction: check again under the write lock.
	var done bool
	if err := tx.QueryRowContext(ctx, `SELECT count(*) > 0 FROM schema_version WHERE version = ?`, m.version).Scan(&done); err != nil {
		return err
	}
	if done {
		return nil
	}
	if _, err := tx.ExecContext(ctx, m.sql); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO schema_version (version, name, applied_at) VALUES (?, ?, ?)`,
		m.version, m.name, time.Now().UnixNano()); err != nil {
		return err
	}
	return tx.Commit()
}
