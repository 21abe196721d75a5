package llm

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// The two providers are spoken directly over their documented HTTP wire
// formats (JSON request, server-sent events back) instead of through their
// SDKs: we use one endpoint each, and the SDKs added 30 MB to the binary
// (BENCHMARKS.md, "Binary size").

// maxErrorBody bounds how much of a non-2xx reply is read to find its message.
const maxErrorBody = 64 << 10

// maxEventLine bounds one SSE line. A chunk carries one delta, so even long
// tool arguments arrive in lines far below this; a longer line is a broken
// or hostile server.
const maxEventLine = 4 << 20

// post sends body as JSON and returns the response when it is 2xx. Any
// other status becomes an *Error carrying the status, the provider's own
// message and Retry-After; transport failures are returned as they are for
// classify to sort.
func post(ctx context.Context, hc *http.Client, provider, url string, header http.Header, body any) (*http.Response, error) {
	data, err := json.Marshal(body)
	if err != nil {
		return nil, &Error{Class: ClassBadRequest, Provider: provider, Message: "encoding the request: " + err.Error(), Err: err}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(data))
	if err != nil {
		return nil, &Error{Class: ClassConfig, Provider: provider, Message: "bad base URL: " + err.Error(), Err: err}
	}
	for k, v := range header {
		req.Header[k] = v
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	resp, err := hc.Do(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		return resp, nil
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	e := &Error{Provider: provider, Status: resp.StatusCode, Class: classForStatus(resp.StatusCode),
		RetryAfter: retryAfter(resp), Message: clip(errorMessage(raw), maxMessage)}
	if e.Message == "" {
		e.Message = http.StatusText(resp.StatusCode)
	}
	detectOverflow(e, raw)
	return nil, e
}

// errorMessage digs the human message out of either provider's error
// envelope: OpenAI {"error":{"message":...}}, Anthropic
// {"type":"error","error":{"type":...,"message":...}}. A body that is
// neither (a proxy's HTML page) is returned as text, clipped later.
func errorMessage(raw []byte) string {
	var env struct {
		Error json.RawMessage `json:"error"`
	}
	if json.Unmarshal(raw, &env) == nil && len(env.Error) > 0 {
		var inner struct {
			Message string `json:"message"`
		}
		if json.Unmarshal(env.Error, &inner) == nil && inner.Message != "" {
			return inner.Message
		}
		var s string
		if json.Unmarshal(env.Error, &s) == nil && s != "" {
			return s // some OpenAI-compatible servers send "error": "text"
		}
	}
	// vLLM before 0.8 answers {"object":"error","message":...,"type":...}
	var flat struct {
		Object  string `json:"object"`
		Message string `json:"message"`
	}
	if json.Unmarshal(raw, &flat) == nil && flat.Message != "" {
		return flat.Message
	}
	return strings.TrimSpace(string(raw))
}

// sseEvent is one server-sent event: its name (empty when the server sends
// none, as OpenAI does) and its data lines joined by "\n".
type sseEvent struct {
	Name string
	Data []byte
}

// sseReader reads events per the WHATWG event-stream format: "field: value"
// lines, comments starting with ':', an event dispatched at a blank line.
// CRLF and LF line ends are accepted.
type sseReader struct {
	sc   *bufio.Scanner
	name string
	data []byte
	has  bool
}

func newSSEReader(r io.Reader) *sseReader {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), maxEventLine)
	return &sseReader{sc: sc}
}

// next returns the next event, io.EOF at a clean end, or the read error
// (a cut connection surfaces here as io.ErrUnexpectedEOF or a net error).
func (s *sseReader) next() (sseEvent, error) {
	for s.sc.Scan() {
		line := s.sc.Bytes()
		if len(line) == 0 {
			if !s.has {
				s.name = ""
				continue
			}
			ev := sseEvent{Name: s.name, Data: s.data}
			s.name, s.data, s.has = "", nil, false
			return ev, nil
		}
		if line[0] == ':' {
			continue
		}
		field, value, _ := bytes.Cut(line, []byte(":"))
		value = bytes.TrimPrefix(value, []byte(" "))
		switch string(field) {
		case "event":
			s.name = string(value)
		case "data":
			if s.has {
				s.data = append(s.data, '\n')
			}
			s.data = append(s.data, value...)
			s.has = true
		}
	}
	if err := s.sc.Err(); err != nil {
		if err == bufio.ErrTooLong {
			return sseEvent{}, fmt.Errorf("an event line exceeds %d bytes", maxEventLine)
		}
		return sseEvent{}, err
	}
	return sseEvent{}, io.EOF
}

// badResponse is the error for a 2xx reply that does not follow the format.
func badResponse(provider, msg string, err error) *Error {
	if err != nil {
		msg += ": " + err.Error()
	}
	return &Error{Class: ClassBadResponse, Provider: provider, Message: msg, Err: err}
}

// joinURL appends path to a base URL, whether or not base ends in '/'.
func joinURL(base, path string) string {
	return strings.TrimRight(base, "/") + "/" + strings.TrimLeft(path, "/")
}
