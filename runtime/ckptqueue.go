package runtime

import "wilco/store"

// ckptQueue holds the checkpoint shares of turns whose events are already
// committed, in the order the turns ran, until the committer writes them.
// Writing them in their own transactions, when no turn is waiting, keeps
// the copies of entities out of the commits that callers and agents wait
// for. A share is only ever written after the events it reflects, so a
// record is never ahead of the log.
type ckptQueue struct {
	segs []ckptSeg
	rows int // rows waiting (see weight), and deletes
}

// ckptSeg is one turn's share.
type ckptSeg struct {
	records   []store.Record
	deletes   []store.Key
	watermark uint64
}

// weight is how many rows a record counts for: a pack of ended deliveries
// weighs about as much as the records of its deliveries would.
func weight(rec store.Record) int { return 1 + len(rec.Data)>>9 }

func (q *ckptQueue) push(records []store.Record, deletes []store.Key, watermark uint64) {
	if len(records) == 0 && len(deletes) == 0 && watermark == 0 {
		return
	}
	q.segs = append(q.segs, ckptSeg{records: records, deletes: deletes, watermark: watermark})
	for _, rec := range records {
		q.rows += weight(rec)
	}
	q.rows += len(deletes)
}

func (q *ckptQueue) empty() bool { return len(q.segs) == 0 }

// take moves up to max rows (at least one record's worth of progress)
// into b, in turn order. A batch writes its records before its deletes, so
// take ends the batch after the first segment with deletes: an entity
// deleted by one share and created again (same key) by a later one must be
// written in that order. A segment's watermark goes with its last row.
func (q *ckptQueue) take(b *store.Batch, max int) {
	taken := 0
	for len(q.segs) > 0 && taken < max {
		s := &q.segs[0]
		n := 0
		for n < len(s.records) && taken < max {
			taken += weight(s.records[n])
			n++
		}
		b.Records = append(b.Records, s.records[:n]...)
		s.records = s.records[n:]
		if len(s.records) > 0 {
			break // the batch is full
		}
		b.Deletes = append(b.Deletes, s.deletes...)
		taken += len(s.deletes)
		if s.watermark > 0 {
			b.Watermark = s.watermark
		}
		hadDeletes := len(s.deletes) > 0
		q.segs[0] = ckptSeg{}
		q.segs = q.segs[1:]
		if hadDeletes {
			break
		}
	}
	q.rows -= taken
	if len(q.segs) == 0 {
		q.segs = nil
	}
}
