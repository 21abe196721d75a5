package server

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"time"

	"github.com/opsagent/opsagent/store"
)

// auditSegmentLine is one archived event exactly as it was hashed, so the
// segment verifies on its own: hash = sha256 of the JSON array [id, org_id,
// seq, project_id, actor_user_id, actor_key_id, action, outcome,
// target_type, target_id, ip, user_agent, detail, created_at, prev_hash]
// (store.AuditHash), and each prev_hash is the line before's hash.
type auditSegmentLine struct {
	ID          string `json:"id"`
	OrgID       string `json:"org_id"`
	Seq         int64  `json:"seq"`
	ProjectID   string `json:"project_id"`
	ActorUserID string `json:"actor_user_id"`
	ActorKeyID  string `json:"actor_key_id"`
	Action      string `json:"action"`
	Outcome     string `json:"outcome"`
	TargetType  string `json:"target_type"`
	TargetID    string `json:"target_id"`
	IP          string `json:"ip"`
	UserAgent   string `json:"user_agent"`
	Detail      string `json:"detail"`
	CreatedAt   string `json:"created_at"`
	PrevHash    string `json:"prev_hash"`
	Hash        string `json:"hash"`
}

// archiveAudit moves one segment of the org's oldest events created before
// cutoff to DATA_DIR/audit-archive/<org>/<first>-<last>.jsonl, durably,
// then deletes them and moves the anchor in one transaction. A crash
// between the two leaves the events stored and the segment rewritten by
// the next run under the same name.
func (s *Server) archiveAudit(ctx context.Context, orgID string, cutoff time.Time) (int, error) {
	events, err := s.db.OldestAuditBefore(ctx, orgID, cutoff, auditSegmentMax)
	if err != nil || len(events) == 0 {
		return 0, err
	}
	// The batched audit writer may still hold events of this org; they are
	// newer than anything here, so the prefix stays a prefix.
	if err := s.archiveAuditSegment(ctx, orgID, events); err != nil {
		return 0, err
	}
	return len(events), nil
}

func (s *Server) archiveAuditSegment(ctx context.Context, orgID string, events []*store.AuditRecord) error {
	first, last := events[0], events[len(events)-1]
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	for _, e := range events {
		if err := enc.Encode(auditSegmentLine{ID: e.ID, OrgID: e.OrgID, Seq: e.Seq, ProjectID: e.ProjectID, ActorUserID: e.ActorUserID,
			ActorKeyID: e.ActorKeyID, Action: e.Action, Outcome: e.Outcome, TargetType: e.TargetType, TargetID: e.TargetID, IP: e.IP,
			UserAgent: e.UserAgent, Detail: e.Detail, CreatedAt: store.TS(e.CreatedAt), PrevHash: e.PrevHash, Hash: e.Hash}); err != nil {
			return err
		}
	}
	dir := s.cfg.Path("audit-archive", filepath.Base(orgID))
	if err := ensureDir(dir); err != nil {
		return err
	}
	name := fmt.Sprintf("%010d-%010d.jsonl", first.Seq, last.Seq)
	if err := writeFileAtomic(filepath.Join(dir, name), buf.Bytes(), 0o600); err != nil {
		return err
	}
	return s.db.ArchiveAuditPrefix(ctx, orgID, first, last, filepath.Join("audit-archive", filepath.Base(orgID), name))
}
