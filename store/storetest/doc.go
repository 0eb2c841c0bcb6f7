// Package storetest is the conformance suite every store.Store implementation
// must pass, the way River's riverdrivertest is for its drivers.
//
// An implementation's test calls Run with a function that opens a fresh,
// empty store, and RunReopen with a function that opens the store kept in a
// directory, so that the suite can close it and open it again on the same
// data:
//
//	func TestConformance(t *testing.T) {
//		t.Parallel()
//		storetest.Run(t, func(t *testing.T) store.Store {
//			s, err := sqlite.Open(filepath.Join(t.TempDir(), "wilco.db"))
//			if err != nil {
//				t.Fatal(err)
//			}
//			return s
//		})
//	}
//
// Every subtest is named after the rule it checks, so that a failure reads as
// the rule that was broken. Most rules are those of package store's comments.
// The suite also pins down what those comments leave open:
//
//   - Commit refuses a watermark beyond the last event of the log (after
//     the batch), and writes nothing of that batch.
//   - Within one batch, a later record with the same kind and ID replaces
//     an earlier one, and Deletes apply after Records.
//   - Commit with a context that is already done writes nothing and
//     returns the context's error; a fully empty batch is a no-op.
//   - Scan delivers at least every event that existed when it started, in
//     order and without gaps, and fn may read from and commit to the store.
//   - Event times come back equal to the nanosecond, in UTC.
//   - Close is idempotent; every other method returns store.ErrClosed after
//     it.
package storetest
