package chatlog

import (
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	_ "modernc.org/sqlite" // registers the "sqlite" database/sql driver
)

// opencode keeps its sessions in one SQLite database (WAL journal),
// <data>/opencode.db, where <data> is $XDG_DATA_HOME/opencode or
// ~/.local/share/opencode; $OPENCODE_DB names another file (absolute, or
// relative to <data>; ":memory:" keeps none), and a build of another
// release channel than "latest" names its file opencode-<channel>.db.
// Taken from opencode (github.com/anomalyco/opencode, the opencode-ai npm
// package) 1.18.33, the version the opencode preset pins: its
// packages/opencode/src/storage/db.ts (the file's path), global/index.ts
// (<data>), session/session.sql.ts (the tables), session/message-v2.ts
// (what a message and a part hold, and their order: messages by
// time_created then id, parts by id), session/processor.ts (how a reply
// is written as it streams) and session/prompt.ts (when a turn is over),
// read in the program bundled in that package and seen in a real
// session.
//
// Three tables hold a conversation:
//   - session: id, directory (the folder the program ran in), parent_id
//     (set for a sub-agent's session), time_created (ms).
//   - message: id, session_id, time_created, data — the message without
//     its ids: {"role":"user"} or {"role":"assistant", "parentID",
//     "finish", "error", "summary", "time":{"created","completed"}}.
//   - part: id, message_id, session_id, data — {"type":…}: "text" (with
//     "synthetic" for text the program adds itself, "time":{"start","end"}),
//     "tool" ("tool", "state":{"status": pending|running|completed|error,
//     "input", "output" or "error"}), "reasoning", "step-start",
//     "step-finish", "patch", "file", "compaction" ({"auto"})…
//
// As a reply streams, a text part is written empty when it starts and
// whole when it ends ("time.end"): the deltas between are only sent to
// the screen. A tool part goes pending (its input still streaming),
// running, then completed or error. The assistant message gets
// "time.completed" when its step is done; the turn is over when that
// message's "finish" is not "tool-calls" (nor "unknown"), or it holds an
// "error" (an interrupted reply: MessageAbortedError). A compaction's
// summary is an assistant message ("summary": true) of the program's own;
// when the compaction was automatic the turn goes on after it with a user
// message of the program's (the prompt replayed, or a synthetic
// "Continue…").
//
// The database is opened read-only and each Read is one short read
// transaction: in WAL mode a reader never blocks opencode's writes, and it
// sees what opencode committed.

type opencodeFormat struct{}

func init() { register(opencodeFormat{}) }

func (opencodeFormat) Name() string { return "opencode" }

// OpencodeDB is the database opencode keeps its sessions in, given its
// environment ("" when it keeps them in memory).
func OpencodeDB(w Where) string {
	data := w.Getenv("XDG_DATA_HOME")
	if data == "" {
		data = filepath.Join(w.Home(), ".local", "share")
	}
	data = filepath.Join(data, "opencode")
	if db := w.Getenv("OPENCODE_DB"); db != "" {
		if db == ":memory:" {
			return ""
		}
		if filepath.IsAbs(db) {
			return db
		}
		return filepath.Join(data, db)
	}
	path := filepath.Join(data, "opencode.db")
	if _, err := os.Stat(path); err != nil {
		// Another channel's build: opencode-<channel>.db.
		if ms, _ := filepath.Glob(filepath.Join(data, "opencode-*.db")); len(ms) > 0 {
			return ocNewest(ms)
		}
	}
	return path
}

// ocNewest is the most recently modified of paths.
func ocNewest(paths []string) string {
	best, bestMod := paths[0], time.Time{}
	for _, p := range paths {
		if st, err := os.Stat(p); err == nil && st.ModTime().After(bestMod) {
			best, bestMod = p, st.ModTime()
		}
	}
	return best
}

// Open finds the session: the one named by w.Conversation, else the first
// one the program made in w.Dir since w.Since (a sub-agent's sessions are
// not the program's conversation). opencode makes a session when it is
// sent its first prompt: until then there is none.
func (opencodeFormat) Open(w Where) (Log, bool, error) {
	path := OpencodeDB(w)
	if path == "" {
		return nil, false, nil
	}
	if _, err := os.Stat(path); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, false, nil
		}
		return nil, false, err
	}
	db, err := sqliteReadOnly(path)
	if err != nil {
		return nil, false, err
	}
	defer db.Close()
	var id string
	if w.Conversation != "" {
		err = db.QueryRow(`SELECT id FROM session WHERE id = ?`, w.Conversation).Scan(&id)
	} else {
		q := `SELECT id FROM session WHERE parent_id IS NULL AND time_created >= ?`
		args := []any{w.Since.UnixMilli()}
		if w.Dir != "" {
			dirs := ocFolders(w.Dir)
			q += ` AND directory IN (?` + strings.Repeat(`, ?`, len(dirs)-1) + `)`
			for _, d := range dirs {
				args = append(args, d)
			}
		}
		err = db.QueryRow(q+` ORDER BY time_created, id LIMIT 1`, args...).Scan(&id)
	}
	if errors.Is(err, sql.ErrNoRows) || ocNoTables(err) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("opencode: find the session in %s: %w", path, err)
	}
	return &opencodeLog{db: path, session: id}, true, nil
}

// ocFolders are the ways the program may have written dir: as given, and
// with its symbolic links resolved.
func ocFolders(dir string) []string {
	out := []string{filepath.Clean(dir)}
	if r, err := filepath.EvalSymlinks(dir); err == nil && r != out[0] {
		out = append(out, r)
	}
	return out
}

// ocNoTables: the database is there but opencode has not made its tables
// yet (it makes them as it starts).
func ocNoTables(err error) bool {
	return err != nil && strings.Contains(err.Error(), "no such table")
}

// sqliteReadOnly opens an SQLite database read-only, as a file: URI so that
// no character of its path is taken for a parameter. A lock opencode
// holds for a moment (a checkpoint) is waited for, briefly.
func sqliteReadOnly(path string) (*sql.DB, error) {
	q := url.Values{}
	q.Set("mode", "ro")
	q.Add("_pragma", "busy_timeout(1000)")
	u := url.URL{Scheme: "file", OmitHost: true, Path: path, RawQuery: q.Encode()}
	db, err := sql.Open("sqlite", u.String())
	if err != nil {
		return nil, fmt.Errorf("opencode: open %s: %w", path, err)
	}
	db.SetMaxOpenConns(1)
	return db, nil
}

// ocMessage is what a message row's data holds.
type ocMessage struct {
	Role     string `json:"role"`
	ParentID string `json:"parentID"`
	Finish   string `json:"finish"`
	// Error is set when the reply failed or was interrupted.
	Error json.RawMessage `json:"error"`
	// Summary is true on a compaction's summary (a user message holds an
	// object there: its diffs).
	Summary json.RawMessage `json:"summary"`
	Time    struct {
		Created   int64 `json:"created"`
		Completed int64 `json:"completed"`
	} `json:"time"`
}

// ocPart is what a part row's data holds.
type ocPart struct {
	Type      string `json:"type"`
	Text      string `json:"text"`
	Synthetic bool   `json:"synthetic"`
	Ignored   bool   `json:"ignored"`
	Time      struct {
		Start int64 `json:"start"`
		End   int64 `json:"end"`
	} `json:"time"`
	Tool  string `json:"tool"`
	State struct {
		Status string         `json:"status"`
		Input  map[string]any `json:"input"`
		Output string         `json:"output"`
		Error  string         `json:"error"`
		Time   struct {
			Start int64 `json:"start"`
			End   int64 `json:"end"`
		} `json:"time"`
	} `json:"state"`
	// Auto: a compaction the program started itself, mid-turn.
	Auto bool `json:"auto"`
}

// ocMsg is one message of a session and its parts, in order.
type ocMsg struct {
	ID      string
	Created int64 // the row's time_created (ms)
	Info    ocMessage
	Parts   []ocPartRow
}

// ocPartRow is one part of a message.
type ocPartRow struct {
	ID   string
	Part ocPart
}

// decodeOcMessage reads a message row's data; ok is false when it is not
// a message.
func decodeOcMessage(data []byte) (m ocMessage, ok bool) {
	if json.Unmarshal(data, &m) != nil || (m.Role != "user" && m.Role != "assistant") {
		return ocMessage{}, false
	}
	return m, true
}

// decodeOcPart reads a part row's data; ok is false when it is not a
// part.
func decodeOcPart(data []byte) (p ocPart, ok bool) {
	if json.Unmarshal(data, &p) != nil || p.Type == "" {
		return ocPart{}, false
	}
	return p, true
}

func ocTime(t int64) time.Time {
	if t <= 0 {
		return time.Time{}
	}
	return time.UnixMilli(t).UTC()
}

// hasError: the message records an error (JSON null is none).
func (m ocMessage) hasError() bool {
	s := strings.TrimSpace(string(m.Error))
	return s != "" && s != "null"
}

func (m ocMessage) isSummary() bool { return strings.TrimSpace(string(m.Summary)) == "true" }

// parseOpencode turns a session's messages (in their order, each with its
// parts in order) into entries:
//   - a user message's text parts, but those the program adds itself
//     (synthetic, ignored): a Prompt each, the text as it was sent;
//   - an assistant message's text parts: Text (Partial while streaming);
//   - a tool part: a ToolCall (Partial while its input streams) and its
//     ToolResult (Partial until it completed or failed): both are there
//     from the start, so what comes after never moves;
//   - an assistant message that ends the turn, once it and its parts are
//     done: TurnEnd.
//
// A message that comes after an assistant message still being written —
// a prompt typed while the agent works — is left for a later read: so
// entries only ever come after those already read, but for Partial ones
// made whole in their place.
func parseOpencode(msgs []ocMsg) []Entry {
	var out []Entry
	// auto: user messages holding an automatic compaction.
	auto := map[string]bool{}
	// replay: the next user message is the program's own (after an
	// automatic compaction), not a prompt.
	replay := false
	lastAssistant := -1
	for i, m := range msgs {
		if m.Info.Role == "assistant" {
			lastAssistant = i
		}
	}
	for i, m := range msgs {
		at := ocTime(m.Info.Time.Created)
		if at.IsZero() {
			at = ocTime(m.Created)
		}
		own := replay
		replay = false
		switch m.Info.Role {
		case "user":
			for _, p := range m.Parts {
				if p.Part.Type == "compaction" && p.Part.Auto {
					auto[m.ID] = true
				}
				if own || p.Part.Type != "text" || p.Part.Synthetic || p.Part.Ignored {
					continue
				}
				out = append(out, Entry{ID: p.ID, Kind: Prompt, Text: p.Part.Text, At: at})
			}
		case "assistant":
			whole := true
			summary := m.Info.isSummary()
			for _, p := range m.Parts {
				es := ocPartEntries(p, at, summary)
				for _, e := range es {
					whole = whole && !e.Partial
				}
				out = append(out, es...)
			}
			done := m.Info.Time.Completed > 0 && whole
			if done && ocEndsTurn(m.Info, auto) {
				out = append(out, Entry{ID: m.ID + "/end", Kind: TurnEnd, At: ocTime(m.Info.Time.Completed)})
			}
			if summary && auto[m.Info.ParentID] && !m.Info.hasError() {
				replay = true
			}
			if !done && i == lastAssistant {
				// What follows waits for this reply to be written.
				return out
			}
		}
	}
	return out
}

// ocEndsTurn: the assistant message m, done, ends its turn.
func ocEndsTurn(m ocMessage, auto map[string]bool) bool {
	if m.hasError() {
		return true
	}
	if m.isSummary() {
		// An automatic compaction goes on with the turn; one the user
		// asked for is a turn of its own.
		return !auto[m.ParentID]
	}
	return m.Finish != "" && m.Finish != "tool-calls" && m.Finish != "unknown"
}

// ocPartEntries are the entries of one part of an assistant message (none
// of a compaction's summary: the program's, not the agent's answer).
func ocPartEntries(p ocPartRow, msgAt time.Time, summary bool) []Entry {
	switch p.Part.Type {
	case "text":
		if summary || p.Part.Synthetic || p.Part.Ignored {
			return nil
		}
		at := ocTime(p.Part.Time.Start)
		if at.IsZero() {
			at = msgAt
		}
		return []Entry{{ID: p.ID, Kind: Text, Text: p.Part.Text, Partial: p.Part.Time.End == 0, At: at}}
	case "tool":
		st := p.Part.State
		call := Entry{ID: p.ID, Kind: ToolCall, Tool: p.Part.Tool, Input: st.Input, At: msgAt}
		if st.Time.Start > 0 {
			call.At = ocTime(st.Time.Start)
		}
		result := Entry{ID: p.ID + "/result", Kind: ToolResult, Tool: p.Part.Tool, Partial: true, At: call.At}
		switch st.Status {
		case "pending", "":
			call.Partial = true
		case "completed":
			result.Text, result.Partial = st.Output, false
		case "error":
			result.Text, result.Error, result.Partial = st.Error, true, false
		}
		if !result.Partial && st.Time.End > 0 {
			result.At = ocTime(st.Time.End)
		}
		return []Entry{call, result}
	}
	return nil
}

// keepPlaces is the entries of a read (cur) laid over those of the read
// before (prev): what prev returned whole stays as it was, in its place;
// a Partial entry takes its new state in its place; entries new to cur
// come after. parseOpencode already only adds at the end; this holds it
// whatever the record does (a message deleted, a clock gone back).
func keepPlaces(prev, cur []Entry) []Entry {
	at := make(map[string]int, len(cur))
	for i, e := range cur {
		at[e.ID] = i
	}
	out := make([]Entry, 0, max(len(prev), len(cur)))
	seen := make(map[string]bool, len(prev))
	for _, e := range prev {
		seen[e.ID] = true
		if i, ok := at[e.ID]; ok && e.Partial {
			e = cur[i]
		}
		out = append(out, e)
	}
	for _, e := range cur {
		if !seen[e.ID] {
			seen[e.ID] = true
			out = append(out, e)
		}
	}
	return out
}

// opencodeLog reads one session of an opencode database.
type opencodeLog struct {
	db, session string
	// msgs and parts are the rows read so far; a row is read again only
	// while it is not done (a reply being written, a text streaming, a
	// tool running).
	msgs  map[string]*ocMsgRow
	parts map[string]*ocPartCache
	out   []Entry
}

type ocMsgRow struct {
	info ocMessage
	ok   bool
	done bool
}

type ocPartCache struct {
	part ocPart
	ok   bool
	done bool
}

func (l *opencodeLog) Path() string         { return l.db + "#" + l.session }
func (l *opencodeLog) Conversation() string { return l.session }

// Read reads the session in one read transaction: the ids and order of
// its messages and parts, then the data of those new or not done.
func (l *opencodeLog) Read() ([]Entry, error) {
	if _, err := os.Stat(l.db); errors.Is(err, fs.ErrNotExist) {
		return l.out, nil
	}
	db, err := sqliteReadOnly(l.db)
	if err != nil {
		return l.out, err
	}
	defer db.Close()
	tx, err := db.Begin()
	if err != nil {
		return l.out, fmt.Errorf("opencode: read %s: %w", l.Path(), err)
	}
	defer tx.Rollback()
	msgs, err := l.readSession(tx)
	if err != nil {
		return l.out, fmt.Errorf("opencode: read %s: %w", l.Path(), err)
	}
	l.out = keepPlaces(l.out, parseOpencode(msgs))
	return l.out, nil
}

func (l *opencodeLog) readSession(tx *sql.Tx) ([]ocMsg, error) {
	if l.msgs == nil {
		l.msgs, l.parts = map[string]*ocMsgRow{}, map[string]*ocPartCache{}
	}
	order, err := ocMessageIDs(tx, l.session)
	if err != nil {
		return nil, err
	}
	partsOf, partIDs, err := ocPartIDs(tx, l.session)
	if err != nil {
		return nil, err
	}
	if err := l.fetchMessages(tx, order); err != nil {
		return nil, err
	}
	if err := l.fetchParts(tx, partsOf, partIDs); err != nil {
		return nil, err
	}
	out := make([]ocMsg, 0, len(order))
	for _, m := range order {
		c := l.msgs[m.id]
		if c == nil || !c.ok {
			continue
		}
		msg := ocMsg{ID: m.id, Created: m.created, Info: c.info}
		for _, id := range partsOf[m.id] {
			if p := l.parts[id]; p != nil && p.ok {
				msg.Parts = append(msg.Parts, ocPartRow{ID: id, Part: p.part})
			}
		}
		out = append(out, msg)
	}
	return out, nil
}

// ocMsgID is a message of the session, by id, and when it was made.
type ocMsgID struct {
	id      string
	created int64
}

// ocMessageIDs are the session's messages in the order they were made.
func ocMessageIDs(tx *sql.Tx, session string) ([]ocMsgID, error) {
	rows, err := tx.Query(`SELECT id, time_created FROM message WHERE session_id = ? ORDER BY time_created, id`, session)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var order []ocMsgID
	for rows.Next() {
		var m ocMsgID
		if err := rows.Scan(&m.id, &m.created); err != nil {
			return nil, err
		}
		order = append(order, m)
	}
	return order, rows.Err()
}

// ocPartIDs are the session's parts: by message, and all in order.
func ocPartIDs(tx *sql.Tx, session string) (partsOf map[string][]string, partIDs []string, err error) {
	rows, err := tx.Query(`SELECT id, message_id FROM part WHERE session_id = ? ORDER BY id`, session)
	if err != nil {
		return nil, nil, err
	}
	defer rows.Close()
	partsOf = map[string][]string{}
	for rows.Next() {
		var id, msg string
		if err := rows.Scan(&id, &msg); err != nil {
			return nil, nil, err
		}
		partsOf[msg] = append(partsOf[msg], id)
		partIDs = append(partIDs, id)
	}
	return partsOf, partIDs, rows.Err()
}

// fetchMessages reads the messages not yet read whole.
func (l *opencodeLog) fetchMessages(tx *sql.Tx, order []ocMsgID) error {
	var stale []string
	for _, m := range order {
		if c := l.msgs[m.id]; c == nil || !c.done {
			stale = append(stale, m.id)
		}
	}
	return ocFetch(tx, "message", stale, func(id string, data []byte) {
		info, ok := decodeOcMessage(data)
		done := ok && (info.Role == "user" || info.Time.Completed > 0)
		l.msgs[id] = &ocMsgRow{info: info, ok: ok, done: done}
	})
}

// fetchParts reads the parts not yet read whole (a prompt's part is whole
// as soon as it is written).
func (l *opencodeLog) fetchParts(tx *sql.Tx, partsOf map[string][]string, partIDs []string) error {
	msgOf := make(map[string]string, len(partIDs))
	for msg, ids := range partsOf {
		for _, id := range ids {
			msgOf[id] = msg
		}
	}
	var stale []string
	for _, id := range partIDs {
		if c := l.parts[id]; c == nil || !c.done {
			stale = append(stale, id)
		}
	}
	return ocFetch(tx, "part", stale, func(id string, data []byte) {
		p, ok := decodeOcPart(data)
		user := false
		if m := l.msgs[msgOf[id]]; m != nil {
			user = m.info.Role == "user"
		}
		l.parts[id] = &ocPartCache{part: p, ok: ok, done: ocPartDone(p, ok, user)}
	})
}

// ocPartDone: a part that will not change in what it says (a prompt's
// text, a reply's text ended, a tool completed or failed, a part that
// says nothing read here).
func ocPartDone(p ocPart, ok, user bool) bool {
	if !ok {
		return false
	}
	switch p.Type {
	case "text":
		return user || p.Time.End > 0
	case "tool":
		return p.State.Status == "completed" || p.State.Status == "error"
	}
	return true
}

// ocFetch reads the data column of the rows of table whose ids are
// given, some at a time.
func ocFetch(tx *sql.Tx, table string, ids []string, each func(id string, data []byte)) error {
	const batch = 200
	for len(ids) > 0 {
		n := min(batch, len(ids))
		args := make([]any, n)
		for i, id := range ids[:n] {
			args[i] = id
		}
		rows, err := tx.Query(`SELECT id, data FROM `+table+` WHERE id IN (?`+strings.Repeat(`, ?`, n-1)+`)`, args...)
		if err != nil {
			return err
		}
		for rows.Next() {
			var id string
			var data []byte
			if err := rows.Scan(&id, &data); err != nil {
				rows.Close()
				return err
			}
			each(id, data)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		ids = ids[n:]
	}
	return nil
}
