package chatlog

import (
	"bytes"
	"database/sql"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// opencodeEvents is a real record: the events opencode 1.18.33 logged (its
// event table) as it wrote two sessions in one folder, each the write of
// a session, message or part row — one session of seven turns (a pasted
// prompt; a long text, a file written and a last text; a tool that
// failed; a reply interrupted; the session resumed; a prompt typed while
// the agent was still answering) and one of a single turn.
const opencodeEvents = "testdata/opencode/events.jsonl"

const (
	ocSession1 = "ses_de85c2496ffeIapg0avhUWF71t"
	ocSession2 = "ses_de857dd8fffef4yEDNcdvn2qvJ"
)

// ocEvent is one line of the record: a row of opencode's event table.
type ocEvent struct {
	Aggregate string          `json:"aggregate_id"`
	Seq       int             `json:"seq"`
	Type      string          `json:"type"`
	Data      json.RawMessage `json:"data"`
}

// ocEventData is what the events written here carry.
type ocEventData struct {
	SessionID string          `json:"sessionID"`
	MessageID string          `json:"messageID"`
	PartID    string          `json:"partID"`
	Info      json.RawMessage `json:"info"`
	Part      json.RawMessage `json:"part"`
	Time      int64           `json:"time"`
}

// ocRow is a row of the session, message or part table, as opencode's
// projector writes it from an event.
type ocRow struct {
	table   string
	id      string
	session string
	message string
	parent  string
	dir     string
	created int64
	data    []byte // without the ids
}

// ocProject turns one event into the rows it writes (upserts; a row with
// no data is deleted), as opencode's projector does: data is the info or
// the part without its ids; time_created is the message's own, or the
// event's time for a part (kept when the row is written again).
func ocProject(line []byte) []ocRow {
	var e ocEvent
	if json.Unmarshal(line, &e) != nil {
		return nil
	}
	var d ocEventData
	if json.Unmarshal(e.Data, &d) != nil {
		return nil
	}
	strip := func(raw json.RawMessage, keys ...string) (map[string]any, []byte) {
		var m map[string]any
		if json.Unmarshal(raw, &m) != nil || m == nil {
			return nil, nil
		}
		out := map[string]any{}
		for k, v := range m {
			if !slices.Contains(keys, k) {
				out[k] = v
			}
		}
		b, _ := json.Marshal(out)
		return m, b
	}
	str := func(m map[string]any, k string) string { s, _ := m[k].(string); return s }
	switch strings.TrimSuffix(e.Type, ".1") {
	case "session.created":
		m, _ := strip(d.Info)
		if m == nil {
			return nil
		}
		var info struct {
			Time struct{ Created int64 } `json:"time"`
		}
		_ = json.Unmarshal(d.Info, &info)
		return []ocRow{{table: "session", id: str(m, "id"), parent: str(m, "parentID"), dir: str(m, "directory"), created: info.Time.Created}}
	case "message.updated":
		m, data := strip(d.Info, "id", "sessionID")
		if m == nil {
			return nil
		}
		var info struct {
			Time struct{ Created int64 } `json:"time"`
		}
		_ = json.Unmarshal(d.Info, &info)
		return []ocRow{{table: "message", id: str(m, "id"), session: str(m, "sessionID"), created: info.Time.Created, data: data}}
	case "message.part.updated":
		m, data := strip(d.Part, "id", "sessionID", "messageID")
		if m == nil {
			return nil
		}
		return []ocRow{{table: "part", id: str(m, "id"), session: str(m, "sessionID"), message: str(m, "messageID"), created: d.Time, data: data}}
	case "message.removed":
		return []ocRow{{table: "message", id: d.MessageID, session: d.SessionID}}
	case "message.part.removed":
		return []ocRow{{table: "part", id: d.PartID, session: d.SessionID}}
	}
	return nil
}

// ocTables holds the rows of a session in memory, as the database does.
type ocTables struct {
	rows map[string]map[string]ocRow // table → id → row
}

func (t *ocTables) apply(line []byte) {
	if t.rows == nil {
		t.rows = map[string]map[string]ocRow{"session": {}, "message": {}, "part": {}}
	}
	for _, r := range ocProject(line) {
		if r.id == "" {
			continue
		}
		old, ok := t.rows[r.table][r.id]
		switch {
		case r.table != "session" && r.data == nil:
			delete(t.rows[r.table], r.id)
		case ok:
			old.data = r.data
			t.rows[r.table][r.id] = old
		default:
			t.rows[r.table][r.id] = r
		}
	}
}

// messages are a session's messages and parts in the order opencode
// reads them.
func (t *ocTables) messages(session string) []ocMsg {
	var msgs []ocRow
	for _, r := range t.rows["message"] {
		if r.session == session {
			msgs = append(msgs, r)
		}
	}
	slices.SortFunc(msgs, func(a, b ocRow) int {
		if a.created != b.created {
			return int(a.created - b.created)
		}
		return strings.Compare(a.id, b.id)
	})
	var parts []ocRow
	for _, r := range t.rows["part"] {
		if r.session == session {
			parts = append(parts, r)
		}
	}
	slices.SortFunc(parts, func(a, b ocRow) int { return strings.Compare(a.id, b.id) })
	var out []ocMsg
	for _, r := range msgs {
		info, ok := decodeOcMessage(r.data)
		if !ok {
			continue
		}
		m := ocMsg{ID: r.id, Created: r.created, Info: info}
		for _, p := range parts {
			if pp, ok := decodeOcPart(p.data); ok && p.message == r.id {
				m.Parts = append(m.Parts, ocPartRow{ID: p.id, Part: pp})
			}
		}
		out = append(out, m)
	}
	return out
}

func ocLines(t testing.TB) [][]byte {
	t.Helper()
	b, err := os.ReadFile(opencodeEvents)
	if err != nil {
		t.Fatal(err)
	}
	return bytes.Split(bytes.TrimSpace(b), []byte("\n"))
}

// ocSummary is each entry as "kind: text or tool", texts cut at 40
// characters, "(partial)" when it is.
func ocSummary(es []Entry) []string {
	var out []string
	for _, e := range es {
		s := string(e.Kind)
		switch e.Kind {
		case ToolCall:
			s += ": " + e.Tool
		case ToolResult:
			s += ": " + e.Tool
			if e.Error {
				s += " (error)"
			}
		case Prompt, Text:
			s += ": " + e.Text[:min(len(e.Text), 40)]
		}
		if e.Partial {
			s += " (partial)"
		}
		out = append(out, s)
	}
	return out
}

func TestOpencodeRecordIsReadAsTheConversation(t *testing.T) {
	t.Parallel()
	var tb ocTables
	for _, l := range ocLines(t) {
		tb.apply(l)
	}
	es := parseOpencode(tb.messages(ocSession1))
	want := []string{
		"prompt: Please write hello.txt and tell me about",
		"text: Second turn answer: all good.",
		"turn_end",
		"prompt: Please write hello.txt now.",
		"text: First, a long text.\n\nThis is a long line", "tool_call: write", "tool_result: write",
		"text: I wrote hello.txt. Done.",
		"turn_end",
		"prompt: Please fail on purpose.",
		"text: Reading a missing file.", "tool_call: read", "tool_result: read (error)",
		"text: The file is missing.",
		"turn_end",
		// Interrupted: the text as far as it came, and the turn's end.
		"prompt: Please be slow.",
		"text: Slow: This is a long line of the agent's",
		"turn_end",
		// Resumed later (opencode --session).
		"prompt: Resumed: now the second answer.",
		"text: Second turn answer: all good.",
		"turn_end",
		// A prompt typed while the agent answered: after that answer.
		"prompt: Please be slow again.",
		"text: Slow: This is a long line of the agent's",
		"turn_end",
		"prompt: Queued: the second question.",
		"text: Second turn answer: all good.",
		"turn_end",
	}
	if got := ocSummary(es); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("entries:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// The prompt as it was pasted (the paste's last newline made a space).
	if p := es[0].Text; p != "Please write hello.txt and tell me about it.\n\n  Indented second paragraph line,\n\tand a tab line. " {
		t.Fatalf("the pasted prompt: %q", p)
	}
	long := es[4].Text
	if !strings.HasPrefix(long, "First, a long text.\n\n") || strings.Count(long, "words enough to wrap.") != 12 {
		t.Fatalf("the long text: %q", long)
	}
	if w := es[5]; w.ID != "prt_217a44d54001smwvH11ExpWUUB" || w.Input["filePath"] != "/repo/hello.txt" || w.Input["content"] != "hello\n" {
		t.Fatalf("the write call: %+v", w)
	}
	if r := es[6]; r.ID != "prt_217a44d54001smwvH11ExpWUUB/result" || r.Text != "Wrote file successfully." || r.Error {
		t.Fatalf("the write result: %+v", r)
	}
	if r := es[12]; r.Text != "File not found: /repo/missing.txt" || !r.Error {
		t.Fatalf("the failed read: %+v", r)
	}
	if e := es[8]; e.ID != "msg_217a4522200144ddH4j06IpJI8/end" || !e.At.Equal(time.UnixMilli(1795692975650)) {
		t.Fatalf("the turn's end: %+v", e)
	}
	for i, e := range es {
		if e.ID == "" || e.At.IsZero() || e.Partial {
			t.Fatalf("entry %d: %+v", i, e)
		}
	}
	// The other conversation of the folder.
	if got := ocSummary(parseOpencode(tb.messages(ocSession2))); strings.Join(got, "|") != "prompt: Hello from the other conversation, say t|text: Second turn answer: all good.|turn_end" {
		t.Fatalf("the other session: %q", got)
	}
}

// ocReadsAsItGrew are the entries of a session read after each event of
// the record, as parseOpencode gives them (each read on its own) and as a
// Log gives them (each read after the one before).
func ocReadsAsItGrew(t testing.TB, lines [][]byte, session string) (parsed, logged [][]Entry) {
	var tb ocTables
	var prev []Entry
	for _, l := range lines {
		tb.apply(l)
		es := parseOpencode(tb.messages(session))
		parsed = append(parsed, es)
		prev = keepPlaces(prev, es)
		logged = append(logged, prev)
	}
	return parsed, logged
}

func TestAnOpencodeRecordReadAsItGrowsNeverChangesWhatItReturned(t *testing.T) {
	t.Parallel()
	lines := ocLines(t)
	for _, session := range []string{ocSession1, ocSession2} {
		parsed, logged := ocReadsAsItGrew(t, lines, session)
		// The record alone, read at each write, already keeps its places.
		checkOpencodeReads(t, parsed)
		checkOpencodeReads(t, logged)
		last := parsed[len(parsed)-1]
		if !reflect.DeepEqual(logged[len(logged)-1], last) {
			t.Fatalf("read as it grew:\n%s\nread whole:\n%s", ocSummary(logged[len(logged)-1]), ocSummary(last))
		}
	}
	// While the reply streams its text is there, empty and partial; its
	// tool call is whole before the text is.
	at := func(parts ...string) int {
		for i, l := range lines {
			if !slices.ContainsFunc(parts, func(p string) bool { return !bytes.Contains(l, []byte(p)) }) {
				return i
			}
		}
		t.Fatalf("no event holds %q", parts)
		return 0
	}
	parsed, _ := ocReadsAsItGrew(t, lines[:at(`"id":"prt_217a44d54001smwvH11ExpWUUB"`, `"status":"completed"`)+1], ocSession1)
	if got := strings.Join(ocSummary(parsed[len(parsed)-1])[3:], "|"); got != "prompt: Please write hello.txt now.|text:  (partial)|tool_call: write|tool_result: write" {
		t.Fatalf("mid-reply: %s", got)
	}
	// The prompt typed while the agent answered waits for that answer.
	parsed, _ = ocReadsAsItGrew(t, lines[:at(`"text":"Queued: the second question."`)+1], ocSession1)
	if got := ocSummary(parsed[len(parsed)-1]); got[len(got)-1] != "text:  (partial)" {
		t.Fatalf("after the queued prompt: %s", got[len(got)-3:])
	}
}

// ocJSON is an entry with all it says, for comparisons.
func ocJSON(e Entry) string {
	b, _ := json.Marshal(e)
	return string(b)
}

// checkOpencodeReads: every entry a read returned whole is, in the next
// read (so in every later one), in the same place and the same; no read
// holds an entry without id or kind, or an id twice.
func checkOpencodeReads(t testing.TB, reads [][]Entry) {
	t.Helper()
	for i, r := range reads {
		ids := map[string]bool{}
		for _, e := range r {
			if e.ID == "" || e.Kind == "" || ids[e.ID] {
				t.Fatalf("read %d: an entry without id or kind, or twice: %+v", i, e)
			}
			ids[e.ID] = true
		}
		if i == 0 {
			continue
		}
		for k, e := range reads[i-1] {
			if e.Partial {
				continue
			}
			if k >= len(r) || ocJSON(r[k]) != ocJSON(e) {
				got := "nothing"
				if k < len(r) {
					got = ocJSON(r[k])
				}
				t.Fatalf("read %d: entry %d was %s, is %s", i, k, ocJSON(e), got)
			}
		}
	}
}

// ocSchema makes the tables opencode keeps a conversation in, with the
// columns it has (packages/opencode/src/session/session.sql.ts).
const ocSchema = `
CREATE TABLE session (id TEXT PRIMARY KEY, project_id TEXT NOT NULL, parent_id TEXT, slug TEXT NOT NULL,
  directory TEXT NOT NULL, title TEXT NOT NULL, version TEXT NOT NULL,
  time_created INTEGER NOT NULL, time_updated INTEGER NOT NULL);
CREATE INDEX session_parent_idx ON session (parent_id);
CREATE TABLE message (id TEXT PRIMARY KEY, session_id TEXT NOT NULL REFERENCES session(id) ON DELETE CASCADE,
  time_created INTEGER NOT NULL, time_updated INTEGER NOT NULL, data TEXT NOT NULL);
CREATE INDEX message_session_time_created_id_idx ON message (session_id, time_created, id);
CREATE TABLE part (id TEXT PRIMARY KEY, message_id TEXT NOT NULL REFERENCES message(id) ON DELETE CASCADE,
  session_id TEXT NOT NULL, time_created INTEGER NOT NULL, time_updated INTEGER NOT NULL, data TEXT NOT NULL);
CREATE INDEX part_message_id_id_idx ON part (message_id, id);
CREATE INDEX part_session_idx ON part (session_id);
`

// ocDB is a database written as opencode writes its own: WAL journal,
// and a writer that never waits for a lock (a reader in its way fails
// its write at once).
func ocDB(t testing.TB, path string) *sql.DB {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=journal_mode(WAL)&_pragma=busy_timeout(0)&_pragma=foreign_keys(1)")
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	t.Cleanup(func() { db.Close() })
	if _, err := db.Exec(ocSchema); err != nil {
		t.Fatal(err)
	}
	return db
}

// ocWrite writes the rows of one event, in one transaction, as opencode's
// projector does (an upsert keeps the row's time_created).
func ocWrite(t testing.TB, db *sql.DB, line []byte) {
	t.Helper()
	tx, err := db.Begin()
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	now := time.Now().UnixMilli()
	for _, r := range ocProject(line) {
		var err error
		switch {
		case r.table == "session":
			var parent any
			if r.parent != "" {
				parent = r.parent
			}
			_, err = tx.Exec(`INSERT INTO session (id, project_id, parent_id, slug, directory, title, version, time_created, time_updated)
				VALUES (?, 'global', ?, 'slug', ?, 'title', '1.18.33', ?, ?) ON CONFLICT (id) DO NOTHING`, r.id, parent, r.dir, r.created, r.created)
		case r.data == nil:
			_, err = tx.Exec(`DELETE FROM `+r.table+` WHERE id = ?`, r.id)
		case r.table == "message":
			_, err = tx.Exec(`INSERT INTO message (id, session_id, time_created, time_updated, data) VALUES (?, ?, ?, ?, ?)
				ON CONFLICT (id) DO UPDATE SET data = excluded.data, time_updated = excluded.time_updated`, r.id, r.session, r.created, now, string(r.data))
		case r.table == "part":
			_, err = tx.Exec(`INSERT INTO part (id, message_id, session_id, time_created, time_updated, data) VALUES (?, ?, ?, ?, ?, ?)
				ON CONFLICT (id) DO UPDATE SET data = excluded.data, time_updated = excluded.time_updated`, r.id, r.message, r.session, r.created, now, string(r.data))
		}
		if err != nil {
			t.Fatalf("write %s %s: %v", r.table, r.id, err)
		}
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
}

// ocWhere is the environment of an opencode whose data is under home.
func ocWhere(home string) Where {
	return Where{Env: map[string]string{"HOME": home, "XDG_DATA_HOME": "", "OPENCODE_DB": ""}, Dir: "/repo"}
}

func TestAnOpencodeConversationIsReadFromItsDatabaseAsItIsWritten(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	w := ocWhere(home)
	path := filepath.Join(home, ".local", "share", "opencode", "opencode.db")
	if OpencodeDB(w) != path {
		t.Fatalf("the database: %s", OpencodeDB(w))
	}
	lines := ocLines(t)
	db := ocDB(t, path)
	var l Log
	var reads [][]Entry
	for _, line := range lines {
		ocWrite(t, db, line)
		if l == nil {
			var ok bool
			var err error
			if l, ok, err = For("opencode").Open(w); err != nil || !ok {
				t.Fatalf("the session is not found: %v", err)
			}
		}
		es, err := l.Read()
		if err != nil {
			t.Fatal(err)
		}
		reads = append(reads, slices.Clone(es))
	}
	checkOpencodeReads(t, reads)
	_, logged := ocReadsAsItGrew(t, lines, ocSession1)
	if got, want := reads[len(reads)-1], logged[len(logged)-1]; !reflect.DeepEqual(got, want) {
		t.Fatalf("read from the database:\n%s\nfrom the record:\n%s", ocSummary(got), ocSummary(want))
	}
	if l.Conversation() != ocSession1 || l.Path() != path+"#"+ocSession1 {
		t.Fatalf("conversation %s at %s", l.Conversation(), l.Path())
	}
	// Read again with nothing new: the same.
	if es, err := l.Read(); err != nil || !reflect.DeepEqual(es, reads[len(reads)-1]) {
		t.Fatalf("read again: %v", err)
	}
	// opencode has quit (its journal checkpointed and removed): the same.
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path + "-wal"); err == nil {
		t.Fatal("the journal is still there")
	}
	l2, ok, err := For("opencode").Open(w)
	if err != nil || !ok {
		t.Fatalf("after opencode quit: ok %v, err %v", ok, err)
	}
	for _, l := range []Log{l, l2} {
		if es, err := l.Read(); err != nil || !reflect.DeepEqual(es, reads[len(reads)-1]) {
			t.Fatalf("read after opencode quit: %v", err)
		}
	}
}

// ocSessionEvent is the event of a session made at ms in dir (a
// sub-agent's when parent is set).
func ocSessionEvent(id, dir, parent string, ms int64) []byte {
	info := map[string]any{"id": id, "directory": dir, "time": map[string]any{"created": ms, "updated": ms}}
	if parent != "" {
		info["parentID"] = parent
	}
	b, _ := json.Marshal(map[string]any{"aggregate_id": id, "type": "session.created.1", "data": map[string]any{"sessionID": id, "info": info}})
	return b
}

func TestTheOpencodeConversationIsFoundAmongTheFoldersOthers(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	w := ocWhere(home)
	if _, ok, err := For("opencode").Open(w); ok || err != nil {
		t.Fatalf("no database yet: ok %v, err %v", ok, err)
	}
	path := OpencodeDB(w)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	// The database is there, its tables not yet.
	empty, err := sql.Open("sqlite", "file:"+path+"?_pragma=journal_mode(WAL)")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := empty.Exec(`PRAGMA user_version = 1`); err != nil {
		t.Fatal(err)
	}
	empty.Close()
	if _, ok, err := For("opencode").Open(w); ok || err != nil {
		t.Fatalf("no tables yet: ok %v, err %v", ok, err)
	}
	db := ocDB(t, path)
	for _, l := range ocLines(t) {
		ocWrite(t, db, l)
	}
	const s1, s2 = 1795692944233, 1795693224562 // when the two sessions were made
	// Between them: a sub-agent's session, and one in another folder.
	ocWrite(t, db, ocSessionEvent("ses_child", "/repo", ocSession1, s1+1000))
	ocWrite(t, db, ocSessionEvent("ses_elsewhere", "/elsewhere", "", s1+2000))
	open := func(since int64, conv string) string {
		t.Helper()
		w := w
		w.Since, w.Conversation = time.UnixMilli(since), conv
		l, ok, err := For("opencode").Open(w)
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			return ""
		}
		return l.Conversation()
	}
	for _, c := range []struct {
		since int64
		conv  string
		want  string
	}{
		{s1 - 5000, "", ocSession1}, // the first made since the start
		{s1, "", ocSession1},
		{s1 + 1, "", ocSession2}, // not a sub-agent's, nor another folder's
		{s2 + 1, "", ""},         // none since: not yet made
		{s2 + 1, ocSession1, ocSession1},
		{0, ocSession2, ocSession2},
		{0, "ses_unknown", ""},
	} {
		if got := open(c.since, c.conv); got != c.want {
			t.Errorf("since %d, conversation %q: found %q, want %q", c.since, c.conv, got, c.want)
		}
	}
	// Another folder's session is found from that folder.
	w.Dir, w.Since = "/elsewhere/", time.UnixMilli(s1)
	if l, ok, _ := For("opencode").Open(w); !ok || l.Conversation() != "ses_elsewhere" {
		t.Fatalf("from /elsewhere: %v %v", ok, l)
	}
}

func TestOpencodeDatabaseIsWhereItsEnvironmentSays(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	data := t.TempDir()
	for _, c := range []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{"HOME": home, "XDG_DATA_HOME": "", "OPENCODE_DB": ""}, filepath.Join(home, ".local/share/opencode/opencode.db")},
		{map[string]string{"HOME": home, "XDG_DATA_HOME": data, "OPENCODE_DB": ""}, filepath.Join(data, "opencode/opencode.db")},
		{map[string]string{"HOME": home, "XDG_DATA_HOME": data, "OPENCODE_DB": "other.db"}, filepath.Join(data, "opencode/other.db")},
		{map[string]string{"HOME": home, "XDG_DATA_HOME": data, "OPENCODE_DB": "/srv/oc.db"}, "/srv/oc.db"},
		{map[string]string{"HOME": home, "XDG_DATA_HOME": data, "OPENCODE_DB": ":memory:"}, ""},
	} {
		if got := OpencodeDB(Where{Env: c.env}); got != c.want {
			t.Errorf("%v: %q, want %q", c.env, got, c.want)
		}
	}
	// A build of another channel: opencode-<channel>.db.
	beta := filepath.Join(home, ".local/share/opencode/opencode-beta.db")
	if err := os.MkdirAll(filepath.Dir(beta), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(beta, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if got := OpencodeDB(Where{Env: map[string]string{"HOME": home, "XDG_DATA_HOME": "", "OPENCODE_DB": ""}}); got != beta {
		t.Fatalf("with only %s: %s", beta, got)
	}
}

func TestReadingOpencodesDatabaseNeverHoldsUpItsWrites(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	w := ocWhere(home)
	db := ocDB(t, OpencodeDB(w))
	lines := ocLines(t)
	ocWrite(t, db, lines[0])
	ocWrite(t, db, lines[1])
	l, ok, err := For("opencode").Open(w)
	if err != nil || !ok {
		t.Fatalf("ok %v, err %v", ok, err)
	}
	// Reads go on while every write is made, by a writer that does not
	// wait for locks: none of its writes fails.
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var readErr error
	var reads int
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			if _, err := l.Read(); err != nil && readErr == nil {
				readErr = err
			}
			reads++
		}
	}()
	for _, line := range lines[2:] {
		ocWrite(t, db, line)
	}
	close(stop)
	wg.Wait()
	if readErr != nil || reads == 0 {
		t.Fatalf("%d reads; error %v", reads, readErr)
	}
	// What a transaction has not committed is not read.
	tx, err := db.Begin()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(`INSERT INTO message (id, session_id, time_created, time_updated, data) VALUES ('msg_zzz', ?, 1895692944787, 0, '{"role":"user"}')`, ocSession1); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(`INSERT INTO part (id, message_id, session_id, time_created, time_updated, data) VALUES ('prt_zzz', 'msg_zzz', ?, 0, 0, '{"type":"text","text":"not yet"}')`, ocSession1); err != nil {
		t.Fatal(err)
	}
	es, err := l.Read()
	if err != nil || es[len(es)-1].Kind != TurnEnd {
		t.Fatalf("read during a write: %v %v", ocSummary(es), err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	if es, err := l.Read(); err != nil || es[len(es)-1].Text != "not yet" {
		t.Fatalf("read after the commit: %v %v", ocSummary(es), err)
	}
}

// ocMsgEvent and ocPartEvent are events of session "s" as opencode logs
// them: a message's info, a part.
func ocMsgEvent(id, role string, created int64, fields map[string]any) []byte {
	info := map[string]any{"id": id, "sessionID": "s", "role": role, "time": map[string]any{"created": created}}
	for k, v := range fields {
		info[k] = v
	}
	b, _ := json.Marshal(map[string]any{"aggregate_id": "s", "type": "message.updated.1", "data": map[string]any{"sessionID": "s", "info": info}})
	return b
}

func ocPartEvent(id, msg string, at int64, fields map[string]any) []byte {
	part := map[string]any{"id": id, "sessionID": "s", "messageID": msg}
	for k, v := range fields {
		part[k] = v
	}
	b, _ := json.Marshal(map[string]any{"aggregate_id": "s", "type": "message.part.updated.1", "data": map[string]any{"sessionID": "s", "part": part, "time": at}})
	return b
}

func ocTool(tool, status string, input map[string]any, out string) map[string]any {
	st := map[string]any{"status": status, "input": input, "time": map[string]any{"start": 10}}
	switch status {
	case "completed":
		st["output"], st["time"] = out, map[string]any{"start": 10, "end": 20}
	case "error":
		st["error"], st["time"] = out, map[string]any{"start": 10, "end": 20}
	}
	return map[string]any{"type": "tool", "tool": tool, "callID": "c-" + tool, "state": st}
}

func TestOpencodeToolsRunningSideBySideKeepTheirPlaces(t *testing.T) {
	t.Parallel()
	a, b := map[string]any{"command": "make a"}, map[string]any{"command": "make b"}
	lines := [][]byte{
		ocMsgEvent("msg_1", "user", 1, nil),
		ocPartEvent("prt_1", "msg_1", 1, map[string]any{"type": "text", "text": "build both"}),
		ocMsgEvent("msg_2", "assistant", 2, map[string]any{"parentID": "msg_1"}),
		ocPartEvent("prt_2", "msg_2", 3, ocTool("bash", "pending", map[string]any{}, "")),
		ocPartEvent("prt_3", "msg_2", 3, ocTool("bash", "pending", map[string]any{}, "")),
		ocPartEvent("prt_2", "msg_2", 3, ocTool("bash", "running", a, "")),
		ocPartEvent("prt_3", "msg_2", 3, ocTool("bash", "running", b, "")),
		ocPartEvent("prt_3", "msg_2", 3, ocTool("bash", "completed", b, "b built")),
		ocPartEvent("prt_2", "msg_2", 3, ocTool("bash", "error", a, "a failed")),
		ocPartEvent("prt_4", "msg_2", 4, map[string]any{"type": "step-finish", "reason": "tool-calls"}),
		ocMsgEvent("msg_2", "assistant", 2, map[string]any{"parentID": "msg_1", "finish": "tool-calls", "time": map[string]any{"created": 2, "completed": 5}}),
	}
	parsed, logged := ocReadsAsItGrew(t, lines, "s")
	checkOpencodeReads(t, parsed)
	checkOpencodeReads(t, logged)
	got := ocSummary(parsed[len(parsed)-1])
	if strings.Join(got, "|") != "prompt: build both|tool_call: bash|tool_result: bash (error)|tool_call: bash|tool_result: bash" {
		t.Fatalf("entries: %q", got)
	}
	last := parsed[len(parsed)-1]
	if last[1].Input["command"] != "make a" || last[2].Text != "a failed" || last[4].Text != "b built" {
		t.Fatalf("entries: %+v", last)
	}
	// Running, a tool's call is whole and its result is not yet.
	if got := strings.Join(ocSummary(parsed[6]), "|"); got != "prompt: build both|tool_call: bash|tool_result: bash (partial)|tool_call: bash|tool_result: bash (partial)" {
		t.Fatalf("while running: %s", got)
	}
}

// From opencode's session/compaction.ts (1.18.33): a compaction is a user
// message holding a "compaction" part, answered by an assistant message
// "summary": true. The program starts one itself when the context
// overflows, mid-turn ("auto": true), and goes on with the turn after it
// with a user message of its own: the prompt replayed, or a synthetic
// "Continue…". One the user asks for (/compact) is a turn of its own.
func TestAnOpencodeCompactionMidTurnIsNotANewTurn(t *testing.T) {
	t.Parallel()
	done := func(finish string, parent string, summary bool, created int64) map[string]any {
		m := map[string]any{"parentID": parent, "finish": finish, "time": map[string]any{"created": created, "completed": created}}
		if summary {
			m["summary"] = true
		}
		return m
	}
	text := func(s string) map[string]any {
		return map[string]any{"type": "text", "text": s, "time": map[string]any{"start": 1, "end": 2}}
	}
	lines := [][]byte{
		ocMsgEvent("msg_01", "user", 1, map[string]any{"summary": map[string]any{"diffs": []any{}}}),
		ocPartEvent("prt_01", "msg_01", 1, map[string]any{"type": "text", "text": "fix it"}),
		ocMsgEvent("msg_02", "assistant", 2, map[string]any{"parentID": "msg_01"}),
		ocPartEvent("prt_02", "msg_02", 2, ocTool("read", "completed", map[string]any{"filePath": "/repo/a"}, "a")),
		ocMsgEvent("msg_02", "assistant", 2, done("tool-calls", "msg_01", false, 2)),
		// The context overflows: the program compacts it.
		ocMsgEvent("msg_03", "user", 3, nil),
		ocPartEvent("prt_03", "msg_03", 3, map[string]any{"type": "compaction", "auto": true, "overflow": true}),
		ocMsgEvent("msg_04", "assistant", 4, map[string]any{"parentID": "msg_03", "summary": true, "mode": "compaction"}),
		ocPartEvent("prt_04", "msg_04", 4, text("Summary of the conversation so far.")),
		ocMsgEvent("msg_04", "assistant", 4, done("stop", "msg_03", true, 4)),
		ocMsgEvent("msg_05", "user", 5, nil),
		ocPartEvent("prt_05", "msg_05", 5, map[string]any{"type": "text", "text": "fix it"}),
		ocMsgEvent("msg_06", "assistant", 6, map[string]any{"parentID": "msg_05"}),
		ocPartEvent("prt_06", "msg_06", 6, text("Fixed.")),
		ocMsgEvent("msg_06", "assistant", 6, done("stop", "msg_05", false, 6)),
		// The user asks for one: a turn of its own, without a prompt.
		ocMsgEvent("msg_07", "user", 7, nil),
		ocPartEvent("prt_07", "msg_07", 7, map[string]any{"type": "compaction", "auto": false}),
		ocMsgEvent("msg_08", "assistant", 8, map[string]any{"parentID": "msg_07", "summary": true, "mode": "compaction"}),
		ocPartEvent("prt_08", "msg_08", 8, text("Summary.")),
		ocMsgEvent("msg_08", "assistant", 8, done("stop", "msg_07", true, 8)),
		// A synthetic text is the program's, not a prompt.
		ocMsgEvent("msg_09", "user", 9, nil),
		ocPartEvent("prt_09", "msg_09", 9, map[string]any{"type": "text", "text": "Continue if you have next steps", "synthetic": true}),
		ocPartEvent("prt_10", "msg_09", 9, map[string]any{"type": "text", "text": "and this", "ignored": true}),
	}
	parsed, _ := ocReadsAsItGrew(t, lines, "s")
	checkOpencodeReads(t, parsed)
	got := strings.Join(ocSummary(parsed[len(parsed)-1]), "|")
	if got != "prompt: fix it|tool_call: read|tool_result: read|text: Fixed.|turn_end|turn_end" {
		t.Fatalf("entries: %s", got)
	}
}

func TestAnOpencodeReplyThatFailedEndsTheTurn(t *testing.T) {
	t.Parallel()
	lines := [][]byte{
		ocMsgEvent("msg_1", "user", 1, nil),
		ocPartEvent("prt_1", "msg_1", 1, map[string]any{"type": "text", "text": "go"}),
		ocMsgEvent("msg_2", "assistant", 2, map[string]any{"parentID": "msg_1"}),
		ocPartEvent("prt_2", "msg_2", 2, ocTool("bash", "pending", map[string]any{}, "")),
		// Interrupted with its tool pending: the tool fails, then the
		// message says so.
		ocPartEvent("prt_2", "msg_2", 2, ocTool("bash", "error", map[string]any{}, "Tool execution aborted")),
		ocMsgEvent("msg_2", "assistant", 2, map[string]any{"parentID": "msg_1", "time": map[string]any{"created": 2, "completed": 3},
			"error": map[string]any{"name": "MessageAbortedError", "data": map[string]any{"message": "Aborted"}}}),
		// A provider's error, the same.
		ocMsgEvent("msg_3", "user", 4, nil),
		ocPartEvent("prt_3", "msg_3", 4, map[string]any{"type": "text", "text": "again"}),
		ocMsgEvent("msg_4", "assistant", 5, map[string]any{"parentID": "msg_3", "time": map[string]any{"created": 5, "completed": 6},
			"error": map[string]any{"name": "APIError", "data": map[string]any{"message": "overloaded"}}}),
		// Completed but its finish not told, nor an error: not the end.
		ocMsgEvent("msg_5", "user", 7, nil),
		ocPartEvent("prt_5", "msg_5", 7, map[string]any{"type": "text", "text": "once more"}),
		ocMsgEvent("msg_6", "assistant", 8, map[string]any{"parentID": "msg_5", "finish": "unknown", "error": nil, "time": map[string]any{"created": 8, "completed": 9}}),
	}
	parsed, _ := ocReadsAsItGrew(t, lines, "s")
	checkOpencodeReads(t, parsed)
	got := strings.Join(ocSummary(parsed[len(parsed)-1]), "|")
	if got != "prompt: go|tool_call: bash|tool_result: bash (error)|turn_end|prompt: again|turn_end|prompt: once more" {
		t.Fatalf("entries: %s", got)
	}
}

func FuzzParseOpencode(f *testing.F) {
	// The record in pieces (the whole is read as it grows above).
	lines := ocLines(f)
	for i := 0; i < len(lines); i += 10 {
		f.Add(bytes.Join(lines[i:min(i+10, len(lines))], []byte("\n")))
	}
	f.Add([]byte(`{"type":"message.updated.1","data":{"info":{"id":"m","sessionID":"s","role":"assistant","summary":true,"parentID":"u","time":{"created":1,"completed":2},"finish":"stop"}}}
{"type":"message.part.updated.1","data":{"part":{"id":"m/end","sessionID":"s","messageID":"m","type":"text","text":"x","time":{"start":1}}}}
{"type":"message.removed.1","data":{"sessionID":"s","messageID":"m"}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		lines := bytes.Split(b, []byte("\n"))
		var sessions []string
		for _, l := range lines {
			for _, r := range ocProject(l) {
				if r.session != "" && !slices.Contains(sessions, r.session) {
					sessions = append(sessions, r.session)
				}
			}
		}
		for _, s := range sessions {
			_, logged := ocReadsAsItGrew(t, lines, s)
			checkOpencodeReads(t, logged)
		}
	})
}
