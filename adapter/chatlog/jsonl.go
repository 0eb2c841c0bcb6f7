package chatlog

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"os"
)

// maxLine bounds one line of a JSONL record: a longer one (a huge tool
// result) is skipped whole rather than held.
const maxLine = 64 << 20

// jsonlLog reads a record a program appends to, one JSON object per line:
// each Read parses only the lines added since the last one (a last line
// not ended yet waits for its newline).
type jsonlLog struct {
	path string
	// parse turns one whole line (the n-th, from 0) into entries.
	parse   func(line []byte, n int) []Entry
	offset  int64
	partial []byte
	skip    bool // the line being read is over maxLine: dropped
	lines   int
	entries []Entry
	conv    string
}

func (l *jsonlLog) Path() string         { return l.path }
func (l *jsonlLog) Conversation() string { return l.conv }

func (l *jsonlLog) Read() ([]Entry, error) {
	f, err := os.Open(l.path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return l.entries, nil
		}
		return l.entries, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return l.entries, err
	}
	if st.Size() < l.offset {
		// Replaced or cut: read it again from its start.
		l.offset, l.partial, l.skip, l.lines, l.entries = 0, nil, false, 0, nil
	}
	if st.Size() == l.offset {
		return l.entries, nil
	}
	if _, err := f.Seek(l.offset, io.SeekStart); err != nil {
		return l.entries, err
	}
	buf := make([]byte, 64<<10)
	for {
		n, err := f.Read(buf)
		if n > 0 {
			l.offset += int64(n)
			l.feed(buf[:n])
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return l.entries, err
		}
	}
	return l.entries, nil
}

// feed takes bytes read: each whole line is parsed.
func (l *jsonlLog) feed(b []byte) {
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			if !l.skip {
				l.partial = append(l.partial, b...)
				if len(l.partial) > maxLine {
					l.partial, l.skip = nil, true
				}
			}
			return
		}
		if !l.skip {
			line := b[:i]
			if len(l.partial) > 0 {
				line = append(l.partial, line...)
			}
			if len(bytes.TrimSpace(line)) > 0 {
				l.entries = append(l.entries, l.parse(line, l.lines)...)
			}
		}
		l.lines++
		l.partial, l.skip = nil, false
		b = b[i+1:]
	}
}
