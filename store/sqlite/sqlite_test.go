package sqlite_test

import (
	"bufio"
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"wilco/store"
	"wilco/store/sqlite"
	"wilco/store/storetest"
)

// TestMain doubles as the crash helper of TestCommittedBatchesSurviveKill,
// and removes the databases the benchmarks share.
func TestMain(m *testing.M) {
	if path := os.Getenv(crashHelperEnv); path != "" {
		crashHelper(path)
		return
	}
	code := m.Run()
	if benchDirPath != "" {
		os.RemoveAll(benchDirPath)
	}
	os.Exit(code)
}

func openAt(t *testing.T, path string, opts ...sqlite.Option) *sqlite.Store {
	t.Helper()
	s, err := sqlite.Open(path, opts...)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestConformance(t *testing.T) {
	t.Parallel()
	storetest.Run(t, func(t *testing.T) store.Store {
		return openAt(t, filepath.Join(t.TempDir(), "wilco.db"))
	})
}

func TestConformanceFullSync(t *testing.T) {
	t.Parallel()
	storetest.Run(t, func(t *testing.T) store.Store {
		return openAt(t, filepath.Join(t.TempDir(), "wilco.db"), sqlite.WithFullSync())
	})
}

func TestConformanceReopen(t *testing.T) {
	t.Parallel()
	storetest.RunReopen(t, func(t *testing.T, dir string) store.Store {
		return openAt(t, filepath.Join(dir, "wilco.db"))
	})
}

func TestWALIsOn(t *testing.T) {
	t.Parallel()
	s := openAt(t, filepath.Join(t.TempDir(), "wilco.db"))

	for name, get := range map[string]func(string) (string, error){"writer": s.WriterPragma, "reader": s.ReaderPragma} {
		mode, err := get("journal_mode")
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if mode != "wal" {
			t.Errorf("%s journal_mode = %q, want wal", name, mode)
		}
	}
	if err := s.Commit(t.Context(), store.Batch{Events: []store.Event{{Seq: 1, Type: "x"}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(s.Path() + "-wal"); err != nil {
		t.Errorf("no WAL file after a commit: %v", err)
	}
}

func TestSynchronousIsNormalByDefaultAndFullOnRequest(t *testing.T) {
	t.Parallel()
	// PRAGMA synchronous reads 1 for NORMAL and 2 for FULL.
	for _, tc := range []struct {
		name string
		opts []sqlite.Option
		want string
	}{
		{"default", nil, "1"},
		{"WithFullSync", []sqlite.Option{sqlite.WithFullSync()}, "2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := openAt(t, filepath.Join(t.TempDir(), "wilco.db"), tc.opts...)
			got, err := s.WriterPragma("synchronous")
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("synchronous = %s, want %s", got, tc.want)
			}
		})
	}
}

func TestReadersCannotWrite(t *testing.T) {
	t.Parallel()
	s := openAt(t, filepath.Join(t.TempDir(), "wilco.db"))

	if got, err := s.ReaderPragma("query_only"); err != nil || got != "1" {
		t.Errorf("reader query_only = %q, %v; want 1", got, err)
	}
}

func TestOpenCreatesTheParentDirectory(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "a", "b", "c", "wilco.db")
	s := openAt(t, path)

	if s.Path() != path {
		t.Errorf("Path = %q, want %q", s.Path(), path)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatalf("database file: %v", err)
	}
	if !fi.Mode().IsRegular() {
		t.Errorf("%s is %v, want a regular file", path, fi.Mode())
	}
}

func TestOpenResolvesARelativePath(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	rel, err := filepath.Rel(mustGetwd(t), filepath.Join(dir, "wilco.db"))
	if err != nil {
		t.Skipf("no relative path to the temp dir: %v", err)
	}
	s := openAt(t, rel)
	if want := filepath.Join(dir, "wilco.db"); s.Path() != want {
		t.Errorf("Path = %q, want %q", s.Path(), want)
	}
}

func TestOpenEscapesThePath(t *testing.T) {
	t.Parallel()
	// Characters that mean something in a URI must reach the file system
	// as they are.
	path := filepath.Join(t.TempDir(), "we?ird #dir%20", "wil&co=1.db")
	s := openAt(t, path)
	if err := s.Commit(t.Context(), store.Batch{Events: []store.Event{{Seq: 1, Type: "x"}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); err != nil {
		t.Errorf("database file not at %q: %v", path, err)
	}
}

func TestOpenErrorNamesThePath(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	file := filepath.Join(dir, "a-file")
	if err := os.WriteFile(file, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	corrupt := filepath.Join(dir, "corrupt.db")
	if err := os.WriteFile(corrupt, bytes.Repeat([]byte("this is not a database. "), 1000), 0o600); err != nil {
		t.Fatal(err)
	}

	for _, tc := range []struct {
		name, path, want string
	}{
		{"parent is a file", filepath.Join(file, "wilco.db"), "not a directory"},
		{"path is a directory", dir, "is a directory"},
		{"corrupt file", corrupt, "not a database"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s, err := sqlite.Open(tc.path)
			if err == nil {
				s.Close()
				t.Fatalf("Open(%q) succeeded", tc.path)
			}
			if !strings.Contains(err.Error(), tc.path) {
				t.Errorf("error %q does not name %q", err, tc.path)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q does not say %q", err, tc.want)
			}
		})
	}
}

func TestSchemaVersionIsRecorded(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "wilco.db")
	s := openAt(t, path)
	s.Close()

	db := rawDB(t, path)
	var version int
	if err := db.QueryRow(`SELECT max(version) FROM schema_version`).Scan(&version); err != nil {
		t.Fatal(err)
	}
	if version != 1 {
		t.Errorf("schema version = %d, want 1", version)
	}

	// Opening again runs no migration twice.
	s = openAt(t, path)
	s.Close()
	var n int
	if err := db.QueryRow(`SELECT count(*) FROM schema_version`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 1 {
		t.Errorf("schema_version has %d rows, want 1", n)
	}
}

func TestNewerSchemaIsRefused(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "wilco.db")
	s := openAt(t, path)
	s.Close()

	db := rawDB(t, path)
	if _, err := db.Exec(`INSERT INTO schema_version (version, name, applied_at) VALUES (99, 'from the future', 0)`); err != nil {
		t.Fatal(err)
	}
	s, err := sqlite.Open(path)
	if err == nil {
		s.Close()
		t.Fatal("Open of a newer schema succeeded")
	}
	if !strings.Contains(err.Error(), "schema version 99") || !strings.Contains(err.Error(), path) {
		t.Errorf("error %q does not name the version and the path", err)
	}
}

func TestWALIsCheckpointedInTheBackground(t *testing.T) {
	t.Parallel()
	s := openAt(t, filepath.Join(t.TempDir(), "wilco.db"), sqlite.WithCheckpointBytes(1))

	type result struct{ logFrames, checkpointed int }
	results := make(chan result, 1)
	errs := make(chan error, 1)
	s.OnCheckpoint(func(logFrames, checkpointed int, err error) {
		if err != nil {
			errs <- err
			return
		}
		select {
		case results <- result{logFrames, checkpointed}:
		default:
		}
	})
	var evs []store.Event
	for i := range 100 {
		evs = append(evs, store.Event{Seq: uint64(i + 1), Type: "x", Data: bytes.Repeat([]byte("y"), 1000)})
	}
	if err := s.Commit(t.Context(), store.Batch{Events: evs}); err != nil {
		t.Fatal(err)
	}
	select {
	case r := <-results:
		if r.logFrames == 0 || r.checkpointed != r.logFrames {
			t.Errorf("checkpoint copied %d of %d frames, want all of them, and some", r.checkpointed, r.logFrames)
		}
	case err := <-errs:
		t.Fatalf("checkpoint: %v", err)
	}
}

// Under a steady stream of commits a PASSIVE checkpoint never catches up,
// so the WAL would never start over. Once it passed the restart size, a
// checkpoint holds the writer for a last pass, and the WAL restarts.
//
// How large the WAL gets before that depends on how fast this machine
// syncs while the writer goes on, so the test counts restarts rather than
// bounding the file's size.
func TestWALRestartsUnderASteadyStreamOfCommits(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "wilco.db")
	const threshold = 256 << 10
	s := openAt(t, path, sqlite.WithCheckpointBytes(threshold), sqlite.WithWALRestartBytes(2<<20))
	var checkpoints atomic.Int64
	s.OnCheckpoint(func(_, _ int, err error) {
		if err == nil {
			checkpoints.Add(1)
		}
	})
	written := commitSteadily(t, s, 40<<20)
	if checkpoints.Load() < 10 {
		t.Fatalf("only %d checkpoints for %d MB", checkpoints.Load(), written>>20)
	}
	restarts := walRestarts(t, path)
	if restarts == 0 {
		t.Fatalf("%d checkpoints while %d MB were committed (restart past 2 MB), and the WAL never restarted", checkpoints.Load(), written>>20)
	}
	t.Logf("%d checkpoints, %d restarts for %d MB", checkpoints.Load(), restarts, written>>20)
}

// walRestarts reads how many times the WAL of the database at path
// started over.
func walRestarts(t *testing.T, path string) int {
	t.Helper()
	n, ok := sqlite.WALRestarts(path)
	if !ok {
		t.Fatalf("the WAL of %s has no header to read", path)
	}
	return int(n)
}

// commitSteadily commits about n bytes of events back to back, in batches
// of 50: the checkpointer never finds the writer idle for long. It returns
// how many bytes it committed.
func commitSteadily(t *testing.T, s *sqlite.Store, n int) int {
	t.Helper()
	seq, written := uint64(0), 0
	for written < n {
		var evs []store.Event
		for range 50 {
			seq++
			evs = append(evs, store.Event{Seq: seq, Type: "delivery.sent", TaskID: "T-1", Data: bytes.Repeat([]byte("y"), 400)})
			written += 400
		}
		if err := s.Commit(t.Context(), store.Batch{Events: evs}); err != nil {
			t.Fatal(err)
		}
	}
	return written
}

// Holding the writer off stalls every commit, so it is done only for a
// WAL past the restart size. The commits counted while a checkpoint held
// the writer must not start another checkpoint at once: that one would
// find the WAL not restarted yet (the first commit after the release
// restarts it), decide to hold, and by then hold the writer for a WAL of a
// few frames.
func TestTheWriterIsHeldOnlyForAWALPastTheRestartSize(t *testing.T) {
	t.Parallel()
	const restartBytes, pageSize = 2 << 20, 4096
	s := openAt(t, filepath.Join(t.TempDir(), "wilco.db"), sqlite.WithCheckpointBytes(256<<10), sqlite.WithWALRestartBytes(restartBytes))
	var mu sync.Mutex
	held := false
	var heldFor []int // the WAL's size, in frames, at each hold
	s.OnCheckpointStep(func(step string) {
		if step == "hold" {
			mu.Lock()
			held = true
			mu.Unlock()
		}
	})
	s.OnCheckpoint(func(logFrames, _ int, err error) {
		mu.Lock()
		defer mu.Unlock()
		if held && err == nil {
			heldFor = append(heldFor, logFrames)
		}
		held = false
	})
	commitSteadily(t, s, 40<<20)
	mu.Lock()
	defer mu.Unlock()
	if len(heldFor) == 0 {
		t.Fatal("the writer was never held: the WAL never passed the restart size")
	}
	for i, n := range heldFor {
		if n*pageSize < restartBytes {
			t.Fatalf("hold %d of %d was for a WAL of %d frames, under the restart size (%d frames); all: %v", i+1, len(heldFor), n, restartBytes/pageSize, heldFor)
		}
	}
	t.Logf("%d holds", len(heldFor))
}

// The pass that holds the writer off must be short: the database file was
// synced and the WAL caught up, both alongside the commits, just before it.
func TestTheWriterIsHeldOnlyForAPassAfterTheDatabaseIsSyncedAndCaughtUp(t *testing.T) {
	t.Parallel()
	s := openAt(t, filepath.Join(t.TempDir(), "wilco.db"), sqlite.WithCheckpointBytes(256<<10), sqlite.WithWALRestartBytes(1<<20))
	var mu sync.Mutex
	var steps []string
	s.OnCheckpointStep(func(step string) {
		mu.Lock()
		steps = append(steps, step)
		mu.Unlock()
	})
	seq := uint64(0)
	for range 2000 {
		var evs []store.Event
		for range 20 {
			seq++
			evs = append(evs, store.Event{Seq: seq, Type: "delivery.sent", TaskID: "T-1", Data: bytes.Repeat([]byte("y"), 400)})
		}
		if err := s.Commit(t.Context(), store.Batch{Events: evs}); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	held := 0
	for i, step := range steps {
		if step != "hold" {
			continue
		}
		held++
		if i < 3 || steps[i-1] != "pass" || steps[i-2] != "sync" || steps[i-3] != "pass" {
			t.Fatalf("the writer was held after %q, not after a pass, a sync of the database and a pass", steps[max(0, i-3):i])
		}
		if i+2 >= len(steps) || steps[i+1] != "pass" || steps[i+2] != "release" {
			t.Fatalf("held for %q, not for one pass", steps[i+1:min(len(steps), i+3)])
		}
	}
	if held == 0 {
		t.Fatalf("16 MB of commits with the WAL to restart past 1 MB never held the writer: steps %q", steps)
	}
}

// TestCommittedBatchesSurviveKill kills (SIGKILL) a process that is
// committing batches as fast as it can, then checks that every batch whose
// Commit had returned is there, whole, with records that agree with the
// watermark.
func TestCommittedBatchesSurviveKill(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "wilco.db")

	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), crashHelperEnv+"="+path)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Kill the helper once it has acknowledged a number of commits: it is
	// then in the middle of the next one.
	const acks = 10
	var acked uint64
	sc := bufio.NewScanner(out)
	for i := 0; i < acks && sc.Scan(); i++ {
		n, err := strconv.ParseUint(sc.Text(), 10, 64)
		if err != nil {
			t.Fatalf("helper said %q", sc.Text())
		}
		acked = n
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	cmd.Wait() //nolint:errcheck // killed
	if acked == 0 {
		t.Fatal("the helper acknowledged no commit")
	}

	s := openAt(t, path)
	last, err := s.LastSeq(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if last < acked {
		t.Fatalf("LastSeq = %d after kill, but seq %d was acknowledged", last, acked)
	}
	if last%crashBatch != 0 {
		t.Errorf("LastSeq = %d: part of a batch survived", last)
	}
	evs, err := s.Events(t.Context(), store.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	for i, e := range evs {
		if e.Seq != uint64(i+1) {
			t.Fatalf("event %d has seq %d", i, e.Seq)
		}
	}
	counter := ""
	wm, err := s.Load(t.Context(), func(r store.Record) error {
		if r.Kind == "counter" {
			counter = string(r.Data)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if wm != last || counter != strconv.FormatUint(last, 10) {
		t.Errorf("after kill: last seq %d, watermark %d, counter %q; want them equal", last, wm, counter)
	}
	s.Close()

	var check string
	if err := rawDB(t, path).QueryRow(`PRAGMA integrity_check`).Scan(&check); err != nil || check != "ok" {
		t.Errorf("integrity_check = %q, %v", check, err)
	}
}

const (
	crashHelperEnv = "WILCO_SQLITE_CRASH_HELPER"
	crashBatch     = 50
)

// crashHelper commits batches to the store at path until it is killed,
// printing the last seq of each batch once its Commit has returned.
func crashHelper(path string) {
	s, err := sqlite.Open(path)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	ctx := context.Background()
	data := bytes.Repeat([]byte("z"), 150)
	for seq := uint64(0); ; {
		var b store.Batch
		for range crashBatch {
			seq++
			b.Events = append(b.Events, store.Event{Seq: seq, Time: time.Now(), Type: "crash.test", TaskID: "t", Agent: "a", Data: data})
			b.Records = append(b.Records, store.Record{Kind: "delivery", ID: strconv.FormatUint(seq%5000, 10), State: "open", Data: data})
		}
		b.Records = append(b.Records, store.Record{Kind: "counter", ID: "c", Data: []byte(strconv.FormatUint(seq, 10))})
		b.Watermark = seq
		if err := s.Commit(ctx, b); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		fmt.Println(seq)
	}
}

func rawDB(t *testing.T, path string) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func mustGetwd(t *testing.T) string {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	return wd
}
