package store

import "testing"

// The rewrites of the newer features' statements (dialect_postgres_features.go).
func TestPgRewritesOfFeatures(t *testing.T) {
	for in, want := range map[string]string{
		`INSERT OR REPLACE INTO channel_approval_messages (approval_id, channel_id, conversation, message_ref, created_at)
			VALUES (?,?,?,?,?)`: `INSERT INTO channel_approval_messages (approval_id, channel_id, conversation, message_ref, created_at) VALUES ($1,$2,$3,$4,$5) ON CONFLICT (approval_id, channel_id, conversation) DO UPDATE SET message_ref = EXCLUDED.message_ref, created_at = EXCLUDED.created_at`,
		`INSERT OR REPLACE INTO channel_session_targets (session_id, channel_id, conversation, created_at)
			VALUES (?,?,?,?)`: `INSERT INTO channel_session_targets (session_id, channel_id, conversation, created_at) VALUES ($1,$2,$3,$4) ON CONFLICT (session_id) DO UPDATE SET channel_id = EXCLUDED.channel_id, conversation = EXCLUDED.conversation, created_at = EXCLUDED.created_at`,
	} {
		if got := pgSQL(in); got != want {
			t.Errorf("pgSQL(%q)\n got %q\nwant %q", in, got, want)
		}
	}
}
