package runner

import (
	"context"
	"io"
	"time"
)

// remotePoll is how often a viewer of a turn running on another server of
// the cluster reads the events that server saved (it saves them in batches
// within tens of milliseconds).
const remotePoll = 150 * time.Millisecond

// nextRemote follows a session whose turn, if any, runs on another server:
// the stored events as they are saved, until the session no longer streams
// (store.SessionStreaming: not running, and no server holds its run, so its
// last events are saved) and a last read found nothing new.
func (s *Subscription) nextRemote(ctx context.Context) ([]Event, <-chan struct{}, error) {
	streaming, err := s.db.SessionStreaming(ctx, s.sessionID)
	if err != nil {
		return nil, nil, err
	}
	evs, err := s.db.SessionEventsAfter(ctx, s.sessionID, s.after, storedPage)
	if err != nil {
		return nil, nil, err
	}
	if len(evs) > 0 {
		out := make([]Event, len(evs))
		for i, e := range evs {
			out[i] = Event{Seq: e.Seq, Type: e.Type, Data: []byte(e.Data), At: e.CreatedAt}
		}
		s.after = evs[len(evs)-1].Seq
		return out, nil, nil
	}
	if !streaming {
		// Read after the check: nothing was saved after it ended.
		return nil, nil, io.EOF
	}
	wake := make(chan struct{})
	time.AfterFunc(remotePoll, func() { close(wake) })
	return nil, wake, nil
}
