package server

import (
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"

	"strconv"

	"github.com/opsagent/opsagent/store"
)

// AuditCheckpointOut is a signed statement of an organization's audit
// chain: seq events, the newest with head_hash. Keep it: a later chain that
// no longer reaches seq with the same hash lost its newest events. The
// signature is Ed25519 over signed_text with public_key (the server's
// checkpoint key, DATA_DIR/keys/audit-checkpoint.key).
type AuditCheckpointOut struct {
	OrgID      string `json:"org_id"`
	Seq        int64  `json:"seq" doc:"the chain's newest event seq, which is also its event count"`
	HeadHash   string `json:"head_hash"`
	CreatedAt  string `json:"created_at"`
	SignedText string `json:"signed_text" doc:"exactly the bytes signed: opsagent-audit-checkpoint/v1, org_id, seq, head_hash, created_at, one per line"`
	Signature  string `json:"signature" doc:"Ed25519 signature of signed_text, base64"`
	PublicKey  string `json:"public_key" doc:"the server's Ed25519 checkpoint key, base64"`
}

func checkpointText(c *store.AuditCheckpoint) string {
	return "opsagent-audit-checkpoint/v1\n" + c.OrgID + "\n" + strconv.FormatInt(c.Seq, 10) + "\n" + c.HeadHash + "\n" + store.TS(c.CreatedAt)
}

func (s *Server) checkpointKey() (ed25519.PrivateKey, error) {
	seed, err := loadOrCreateKey(s.cfg.Path("keys", "audit-checkpoint.key"), ed25519.SeedSize)
	if err != nil {
		return nil, err
	}
	return ed25519.NewKeyFromSeed(seed[:ed25519.SeedSize]), nil
}

func (s *Server) checkpointOut(c *store.AuditCheckpoint) (*AuditCheckpointOut, error) {
	key, err := s.checkpointKey()
	if err != nil {
		return nil, err
	}
	return &AuditCheckpointOut{OrgID: c.OrgID, Seq: c.Seq, HeadHash: c.HeadHash, CreatedAt: store.TS(c.CreatedAt),
		SignedText: checkpointText(c), Signature: c.Signature,
		PublicKey: base64.StdEncoding.EncodeToString(key.Public().(ed25519.PublicKey))}, nil
}

// publishCheckpoint signs and stores a checkpoint of the org's chain head.
func (s *Server) publishCheckpoint(ctx context.Context, orgID string) (*AuditCheckpointOut, error) {
	seq, head, err := s.db.AuditHead(ctx, orgID)
	if err != nil {
		return nil, err
	}
	key, err := s.checkpointKey()
	if err != nil {
		return nil, err
	}
	c := &store.AuditCheckpoint{ID: store.NewID(), OrgID: orgID, Seq: seq, HeadHash: head, CreatedAt: s.Now()}
	c.Signature = base64.StdEncoding.EncodeToString(ed25519.Sign(key, []byte(checkpointText(c))))
	if err := s.db.CreateAuditCheckpoint(ctx, c); err != nil {
		return nil, err
	}
	return s.checkpointOut(c)
}

// checkTruncation compares the chain with the org's newest checkpoint: the
// chain must still hold its seq with the same hash. It returns the reason
// when it does not ("" when it does, or when there is no checkpoint yet).
func (s *Server) checkTruncation(ctx context.Context, orgID string) (string, *store.AuditCheckpoint, error) {
	cp, err := s.db.LatestAuditCheckpoint(ctx, orgID)
	if store.IsNotFound(err) {
		return "", nil, nil
	}
	if err != nil {
		return "", nil, err
	}
	head, _, err := s.db.AuditHead(ctx, orgID)
	if err != nil {
		return "", nil, err
	}
	if head < cp.Seq {
		return "truncated", cp, nil
	}
	hash, err := s.db.AuditHashAt(ctx, orgID, cp.Seq)
	switch {
	case store.IsNotFound(err): // moved to the audit archive by retention: nothing to compare here
		return "", cp, nil
	case err != nil:
		return "", nil, err
	case hash != cp.HeadHash:
		return "checkpoint_mismatch", cp, nil
	}
	return "", cp, nil
}

// checkpointHeader is the compact JSON of a checkpoint, for the export's
// X-Audit-Checkpoint header.
func checkpointHeader(c *AuditCheckpointOut) string {
	b, _ := json.Marshal(c)
	return string(b)
}
