// Package sqlite is wilco's default store: one embedded SQLite database file,
// through modernc.org/sqlite (pure Go, no cgo).
//
// # Connections
//
// A Store holds one writer connection, which every Commit goes through under
// a mutex; a pool of reader connections (query_only); and one connection on
// which a background goroutine checkpoints the WAL. The database is in WAL
// mode, so readers never block the writer and the writer never blocks
// readers, and every read sees a whole number of batches.
//
// # Durability
//
// By default the database runs with synchronous=NORMAL: when Commit returns
// nil the batch is in the WAL file, in the operating system's hands, before
// wilco performs any effect or answers anyone. That survives a crash or a
// kill -9 of the process, which is what wilco promises (see
// TestCommittedBatchesSurviveKill). It does not survive a power loss or a
// kernel crash, which may lose the last commits, though never corrupt the
// database. WithFullSync (synchronous=FULL) makes every Commit wait for an
// fsync of the WAL, which survives those too, at the cost of one fsync per
// Commit: tens to hundreds of microseconds on a local SSD, milliseconds on
// network or spinning disks, which then bounds the number of group commits
// per second and so the size of the batches.
//
// # Writing
//
// Commit checks the seqs against the last seq it keeps in memory, then,
// inside a BEGIN IMMEDIATE transaction, against the log itself, so that a
// second writer on the same file cannot make it skip or repeat a seq. Rows
// are written with multi-row INSERT and DELETE statements prepared once,
// a few hundred rows each.
//
// SQLite's automatic checkpoint would run inside the commit that makes the
// WAL cross its threshold, and make every caller waiting on that commit wait
// for thousands of page writes and an fsync. Here it is off; the writer counts
// what it wrote and kicks a PASSIVE checkpoint on another connection, which
// copies the WAL into the database while later commits go on.
//
// # Reading
//
// Scan reads in chunks, each in its own short read transaction, and calls fn
// with no transaction open: a slow subscriber neither pins the WAL (which
// could then not be checkpointed) nor holds a connection, and fn may use the
// store. Scan delivers the events that existed when it started.
//
// Load reads the watermark and the records in one read transaction, so the
// two always agree, straight from the driver's rows: it is what wilco waits
// for on start, with a million open deliveries in the worst case.
//
// # Schema
//
// Tables are created and upgraded by migrations written in Go (schema.go);
// the schema_version table records which have run, and a database written by
// a newer wilco is refused rather than misread.
//
//	events(seq INTEGER PRIMARY KEY, time INTEGER, type, task_id, agent, data BLOB)
//	records(kind, id, state, agent, task_id, data BLOB, PRIMARY KEY (kind, id)) WITHOUT ROWID
//	meta(key PRIMARY KEY, value) WITHOUT ROWID
//
// time is Unix nanoseconds (NULL for the zero time); times come back in UTC.
// Events are indexed by task and by agent with partial indexes that leave out
// the events concerning no task or no agent; records by kind and state.
package sqlite
