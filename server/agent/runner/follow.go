package runner

// LiveTurnStart returns the first event number of the session's turn in
// progress, false when none is live. A follower that learns of a turn after
// it started (a chat channel relaying a turn resumed by an approval) reads
// from there instead of guessing from the stored events, which lag the turn.
func (r *Runner) LiveTurnStart(sessionID string) (int64, bool) {
	if h := r.hub(sessionID); h != nil {
		return h.first, true
	}
	return 0, false
}
