package cli

import (
	"bufio"
	"encoding/json"
	"io"
	"strconv"
	"strings"
)

// event is one server-sent event of a session stream.
type event struct {
	ID   int64           `json:"id"`
	Type string          `json:"event"`
	Data json.RawMessage `json:"data"`
}

// readEvents parses a text/event-stream (the WHATWG format: id, event and
// data fields, multi-line data, comments) and calls fn for each event until
// the stream ends or fn returns false. It returns nil at a clean end of the
// stream and the read error otherwise.
func readEvents(r io.Reader, fn func(event) bool) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 8<<20)
	var ev event
	var data []string
	for sc.Scan() {
		line := sc.Text()
		if line == "" {
			if len(data) > 0 || ev.Type != "" {
				ev.Data = json.RawMessage(strings.Join(data, "\n"))
				if ev.Type == "" {
					ev.Type = "message"
				}
				if !fn(ev) {
					return nil
				}
			}
			ev, data = event{ID: ev.ID}, nil
			continue
		}
		if strings.HasPrefix(line, ":") {
			continue // comment (keep-alive)
		}
		field, value, _ := strings.Cut(line, ":")
		value = strings.TrimPrefix(value, " ")
		switch field {
		case "id":
			if n, err := strconv.ParseInt(value, 10, 64); err == nil {
				ev.ID = n
			}
		case "event":
			ev.Type = value
		case "data":
			data = append(data, value)
		}
	}
	return sc.Err()
}
