package server

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"wilco/atomicfile"
	"wilco/wire"
)

// maestroTime is how AI Maestro writes times (JavaScript's toISOString).
const maestroTime = "2006-01-02T15:04:05.000Z07:00"

// maxPerBox bounds each inbox and sent box: the oldest archived messages
// go first, then the oldest read ones, then the oldest.
const maxPerBox = 1000

// content reads a message's content's type and text.
func maestroContent(c wire.MaestroRawContent) (typ, msg string) {
	var f wire.MaestroContent
	_ = json.Unmarshal(c, &f)
	return f.Type, f.Message
}

func summary(m wire.MaestroMessage) wire.MaestroSummary {
	typ, msg := maestroContent(m.Content)
	return wire.MaestroSummary{
		ID: m.ID, From: m.From, FromAlias: m.FromAlias, FromHost: m.FromHost, To: m.To, ToAlias: m.ToAlias, ToHost: m.ToHost,
		Timestamp: m.Timestamp, Subject: m.Subject, Priority: m.Priority, Status: m.Status, Type: typ, Preview: preview(msg, 100),
	}
}

func preview(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n])
}

// mailbox holds the AI Maestro view of messages: each agent's inbox and
// sent box, with AI Maestro's read and archived marks. wilco's own state
// (deliveries and their acknowledgments) lives in the core; the mailbox
// only remembers what each agent fetched and marked.
type mailbox struct {
	mu    sync.Mutex
	path  string
	Seq   int                  `json:"seq"`
	Boxes map[string]*ownBoxes `json:"boxes"`
}

type ownBoxes struct {
	Inbox []*storedMessage `json:"inbox"`
	Sent  []*storedMessage `json:"sent"`
}

// storedMessage is a message with the wilco delivery it is a send of (""
// for a message an agent wrote).
type storedMessage struct {
	wire.MaestroMessage
	WilcoDelivery string `json:"wilcoDelivery,omitempty"`
}

func openMailbox(path string) (*mailbox, error) {
	m := &mailbox{path: path, Boxes: map[string]*ownBoxes{}}
	if path == "" {
		return m, nil
	}
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return m, nil
	}
	if err != nil {
		return nil, fmt.Errorf("server: AI Maestro mailbox: %w", err)
	}
	if err := json.Unmarshal(data, m); err != nil {
		return nil, fmt.Errorf("server: AI Maestro mailbox %s: %w", path, err)
	}
	if m.Boxes == nil {
		m.Boxes = map[string]*ownBoxes{}
	}
	return m, nil
}

// save writes the mailbox (under m.mu), replacing the file atomically.
func (m *mailbox) save() error {
	if m.path == "" {
		return nil
	}
	data, err := json.Marshal(m)
	if err != nil {
		return err
	}
	return atomicfile.WriteFile(m.path, data, 0o600)
}

func (m *mailbox) own(owner string) *ownBoxes {
	b := m.Boxes[owner]
	if b == nil {
		b = &ownBoxes{}
		m.Boxes[owner] = b
	}
	return b
}

// nextID returns a new message id in AI Maestro's style.
func (m *mailbox) nextID(now time.Time) string {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.Seq++
	return fmt.Sprintf("msg-%d-%d", now.UnixMilli(), m.Seq)
}

// add files msg in the owner's box ("inbox" or "sent") and saves.
func (m *mailbox) add(adds ...mailboxAdd) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, a := range adds {
		b := m.own(a.owner)
		c := *a.msg
		sm := &c
		if a.box == "sent" {
			sm.Status = wire.StatusRead
			b.Sent = trim(append(b.Sent, sm))
		} else {
			b.Inbox = trim(append(b.Inbox, sm))
		}
	}
	return m.save()
}

type mailboxAdd struct {
	owner, box string
	msg        *storedMessage
}

func trim(list []*storedMessage) []*storedMessage {
	for _, drop := range []string{"archived", "read", ""} {
		for len(list) > maxPerBox {
			i := slices.IndexFunc(list, func(sm *storedMessage) bool { return drop == "" || string(sm.Status) == drop })
			if i < 0 {
				break
			}
			list = slices.Delete(list, i, i+1)
		}
	}
	return list
}

func (m *mailbox) box(owner, box string) []*storedMessage {
	b := m.Boxes[owner]
	if b == nil {
		return nil
	}
	if box == "sent" {
		return b.Sent
	}
	return b.Inbox
}

// listFilter is what a listing selects.
type listFilter struct {
	status, priority, from, to string
	limit                      int // 0: all
}

// list returns summaries of the owner's box, newest first.
func (m *mailbox) list(owner, box string, f listFilter) []wire.MaestroSummary {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := []wire.MaestroSummary{}
	list := m.box(owner, box)
	for i := len(list) - 1; i >= 0; i-- {
		sm := list[i]
		if f.status != "" && string(sm.Status) != f.status || f.priority != "" && string(sm.Priority) != f.priority ||
			f.from != "" && sm.From != f.from && sm.FromAlias != f.from || f.to != "" && sm.To != f.to && sm.ToAlias != f.to {
			continue
		}
		out = append(out, summary(sm.MaestroMessage))
		if f.limit > 0 && len(out) == f.limit {
			break
		}
	}
	return out
}

// get returns a copy of one message of the owner's box.
func (m *mailbox) get(owner, box, id string) (wire.MaestroMessage, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, sm := range m.box(owner, box) {
		if sm.ID == id {
			return sm.MaestroMessage, true
		}
	}
	return wire.MaestroMessage{}, false
}

// inboxOwner returns whose inbox holds the message id ("" for none).
func (m *mailbox) inboxOwner(id string) (string, *storedMessage) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for owner, b := range m.Boxes {
		for _, sm := range b.Inbox {
			if sm.ID == id {
				c := *sm
				return owner, &c
			}
		}
	}
	return "", nil
}

// mark sets a message's status in the owner's inbox.
func (m *mailbox) mark(owner, id string, status wire.MaestroStatus) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, sm := range m.box(owner, "inbox") {
		if sm.ID == id {
			if sm.Status == status {
				return true, nil
			}
			sm.Status = status
			return true, m.save()
		}
	}
	return false, nil
}

// remove deletes a message from the owner's inbox.
func (m *mailbox) remove(owner, id string) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	b := m.Boxes[owner]
	if b == nil {
		return false, nil
	}
	i := slices.IndexFunc(b.Inbox, func(sm *storedMessage) bool { return sm.ID == id })
	if i < 0 {
		return false, nil
	}
	b.Inbox = slices.Delete(b.Inbox, i, i+1)
	return true, m.save()
}

// owners lists the agents whose inbox holds messages.
func (m *mailbox) owners() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := []string{}
	for owner, b := range m.Boxes {
		if len(b.Inbox) > 0 {
			out = append(out, owner)
		}
	}
	slices.Sort(out)
	return out
}

// hostName strips "@host" from an AI Maestro address.
func hostName(addr string) string {
	name, _, _ := strings.Cut(addr, "@")
	return name
}
