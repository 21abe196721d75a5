// Package connector is the server side of the outbound-only connector
// channel: a Hub holds the live WebSocket connections of connectors (one
// per host), sends them commands and streams their output back. The host
// side is package connector/agent; both speak the frames in this file.
//
// The protocol is JSON text messages over one WebSocket the connector dials
// to the API's own port (/api/connectors/connect), authenticated by its
// ocn_ token in the Authorization header:
//
//	connector -> server  hello    {version, hostname, os, arch, name?, labels?, host_sandbox}
//	server -> connector  welcome  {connector_id, name, heartbeat_ms, max_frame}
//	server -> connector  run      {call_id, command, env, timeout_ms, max_output, sandbox}
//	server -> connector  cancel   {call_id}
//	connector -> server  output   {call_id, data | raw}           (many, in order)
//	connector -> server  result   {call_id, exit_code, duration_ms, timed_out, refused, error}
//	connector -> server  ping     {}   server -> connector  pong {}
//	server -> connector  error    {message}  (a frame the server refused)
//
// A connector can only answer calls the server sent on its own connection:
// output or results for any other call id are dropped and logged.
package connector

import (
	"encoding/json"

	"github.com/opsagent/opsagent/server/sandbox"
)

// Frame types.
const (
	TypeHello   = "hello"
	TypeWelcome = "welcome"
	TypeRun     = "run"
	TypeCancel  = "cancel"
	TypeOutput  = "output"
	TypeResult  = "result"
	TypePing    = "ping"
	TypePong    = "pong"
	TypeError   = "error"
)

// Limits every frame obeys. MaxFrame bounds one WebSocket message in
// either direction; an output frame carries at most ChunkSize bytes of
// output (JSON escaping can grow it up to six times).
const (
	MaxFrame  = 256 << 10
	ChunkSize = 16 << 10
)

// Frame is one message. Type says which of the other fields are set.
type Frame struct {
	Type string `json:"type"`
	// CallID names the call a run, cancel, output or result belongs to.
	CallID string `json:"call_id,omitempty"`

	*Hello   `json:",omitempty"`
	*Welcome `json:",omitempty"`
	*Run     `json:",omitempty"`
	*Result  `json:",omitempty"`

	// Data is a piece of output (output frames), cut on a character
	// boundary; Raw carries a piece that is not UTF-8, byte for byte
	// (base64 in JSON). The server masks over the joined stream.
	Data string `json:"data,omitempty"`
	Raw  []byte `json:"raw,omitempty"`
	// Message explains an error frame.
	Message string `json:"message,omitempty"`
}

// Hello is the connector's first frame: what it runs on.
type Hello struct {
	Version  string            `json:"version"`
	Hostname string            `json:"hostname"`
	OS       string            `json:"os"`
	Arch     string            `json:"arch"`
	Labels   map[string]string `json:"labels,omitempty"`
	// HostAllowList says whether a host allow-list file is in force.
	HostAllowList bool `json:"host_allow_list"`
	// Kind is "" for a host, "kubernetes" for a cluster (kube_wire.go).
	Kind       string    `json:"kind,omitempty"`
	Kubernetes *KubeInfo `json:"kubernetes,omitempty"`
	// Sandbox is what the host's kernel offers the sandbox (nil from a
	// connector that predates it: read-only commands then ask a person).
	Sandbox *sandbox.Kernel `json:"host_sandbox,omitempty"`
	// HostProfile is the host's own --sandbox-profile, which narrows every
	// command's profile there (nil: the host adds nothing).
	HostProfile *sandbox.Profile `json:"host_profile,omitempty"`
}

// Welcome answers a hello: who the connector is and how often to beat.
type Welcome struct {
	ConnectorID string `json:"connector_id"`
	Name        string `json:"name"`
	HeartbeatMS int64  `json:"heartbeat_ms"`
	MaxFrameLen int    `json:"max_frame"`
}

// Run asks the connector to run one shell command.
type Run struct {
	Command   string            `json:"command"`
	Env       map[string]string `json:"env,omitempty"`
	TimeoutMS int64             `json:"timeout_ms"`
	MaxOutput int64             `json:"max_output"`
	// Kube is a typed cluster request, sent only to a kubernetes connector.
	Kube *KubeCall `json:"kube,omitempty"`
	// Sandbox is the profile the server built from the call's decision;
	// the host narrows it with its own and applies it (nil: host-changing
	// calls denied, from a server that predates the sandbox).
	Sandbox *sandbox.Profile `json:"sandbox,omitempty"`
}

// Result ends a call. Refused is set when the host's allow-list refused
// the command (it did not run); Error when it could not start.
type Result struct {
	ExitCode   int    `json:"exit_code"`
	DurationMS int64  `json:"duration_ms"`
	DurationUS int64  `json:"duration_us,omitempty"` // the same, finer (for overhead measurements)
	TimedOut   bool   `json:"timed_out,omitempty"`
	Refused    string `json:"refused,omitempty"`
	Error      string `json:"error,omitempty"`
	// Truncated: the connector stopped sending output at MaxOutput.
	Truncated bool `json:"truncated,omitempty"`
	// SandboxRefused names what the host's sandbox refused the command
	// ("write to /etc/x").
	SandboxRefused []string `json:"sandbox_refused,omitempty"`
}

// Encode marshals a frame; frames are built from plain values and cannot fail.
func Encode(f *Frame) []byte {
	b, err := json.Marshal(f)
	if err != nil {
		panic("connector: encode frame: " + err.Error())
	}
	return b
}
