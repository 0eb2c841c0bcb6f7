package blackbox

// allEvents is wilco's whole event log.
func (in *Instance) AllEvents() []Event {
	in.T.Helper()
	var all []Event
	var after uint64
	for {
		evs, next := in.Events(after)
		if len(evs) == 0 {
			return all
		}
		all = append(all, evs...)
		after = next
	}
}
