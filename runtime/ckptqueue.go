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
	rows int // records and deletes waiting
}

// ckptSeg is one turn's share.
type ckptSeg struct {
	records   []store.Record
	deletes   []store.Key
	watermark uint64
}

func (q *ckptQueue) push(records []store.Record, deletes []store.Key, watermark uint64) {
	if len(records) == 0 && len(deletes) == 0 && watermark == 0 {
		return
	}
	q.segs = append(q.segs, ckptSeg{records: records, deletes: deletes, watermark: watermark})
	q.rows += len(records) + len(deletes)
}

func (q *ckptQueue) empty() bool { return len(q.segs) == 0 }

// take moves up to max rows (at least one segment's worth of progress)
// into b, in turn order. A batch writes its records before its deletes, so
// take ends the batch after the first segment with deletes: an entity
// deleted by one share and created again (same key) by a later one must be
// written in that order. A segment's watermark goes with its last row.
func (q *ckptQueue) take(b *store.Batch, max int) {
	taken := 0
	for len(q.segs) > 0 && taken < max {
		s := &q.segs[0]
		n := min(len(s.records), max-taken)
		b.Records = append(b.Records, s.records[:n]...)
		s.records = s.records[n:]
		taken += n
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
