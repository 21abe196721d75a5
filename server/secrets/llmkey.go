package secrets

import (
	"context"
	"encoding/json"
	"time"

	"github.com/opsagent/opsagent/store"
)

// llmKeyName is the one LLM credential an org keeps (kind llm_key, org-wide).
const llmKeyName = "default"

// LLMKey is an org's own LLM credential; it overrides the server's
// OPSAGENT_LLM_* settings for that org's agent runs.
type LLMKey struct {
	Provider string `json:"provider,omitempty"` // openai, anthropic; "" = the server's provider
	BaseURL  string `json:"base_url,omitempty"`
	Model    string `json:"model,omitempty"`
	APIKey   string `json:"-"` // never serialized: the row keeps it only as ciphertext
	// Context settings of a fallback model (llm_fallbacks.go); the primary's
	// live in store.ModelSettings.
	ContextWindow int    `json:"context_window,omitempty"`
	AnswerReserve int    `json:"answer_reserve,omitempty"`
	TextToolCalls string `json:"text_tool_calls,omitempty"`
}

// LLMKeyInfo is what may be shown about an org's LLM key: everything but the key.
type LLMKeyInfo struct {
	Provider, BaseURL, Model string
	UpdatedBy                string
	UpdatedAt                time.Time
	LastUsedAt               *time.Time
}

// PutLLMKey stores (or replaces) the org's LLM key.
func (k *Keeper) PutLLMKey(ctx context.Context, orgID, actorID string, key LLMKey) (*LLMKeyInfo, error) {
	meta, err := json.Marshal(key)
	if err != nil {
		return nil, err
	}
	s, _, err := k.Put(ctx, PutInput{OrgID: orgID, Kind: store.SecretKindLLMKey, Name: llmKeyName,
		Meta: string(meta), Value: []byte(key.APIKey), ActorID: actorID})
	if err != nil {
		return nil, err
	}
	return infoOf(s), nil
}

// DeleteLLMKey clears the org's LLM key; not found when none is set.
func (k *Keeper) DeleteLLMKey(ctx context.Context, orgID string) error {
	return k.Delete(ctx, orgID, "", store.SecretKindLLMKey, llmKeyName)
}

// LLMKeyInfo reports the non-secret fields of the org's LLM key; not found
// when none is set.
func (k *Keeper) LLMKeyInfo(ctx context.Context, orgID string) (*LLMKeyInfo, error) {
	s, err := k.db.FindSecret(ctx, orgID, "", store.SecretKindLLMKey, llmKeyName)
	if err != nil {
		return nil, err
	}
	return infoOf(s), nil
}

// LLMKey returns the org's LLM credential with its key decrypted, for the LLM
// client; a not-found error (store.IsNotFound) when the org has none, in which
// case the server's own settings apply.
func (k *Keeper) LLMKey(ctx context.Context, orgID string) (*LLMKey, error) {
	rows, err := k.decryptAll(ctx, orgID, "", store.SecretKindLLMKey, []string{llmKeyName})
	if err != nil {
		return nil, err
	}
	if len(rows) == 0 {
		return nil, store.NotFound("LLM key")
	}
	var key LLMKey
	_ = json.Unmarshal([]byte(rows[0].secret.Meta), &key)
	key.APIKey = string(rows[0].value)
	if err := k.db.TouchSecrets(ctx, []string{rows[0].secret.ID}); err != nil {
		k.log.Warn("secrets: could not stamp last use", "err", err)
	}
	return &key, nil
}

func infoOf(s *store.Secret) *LLMKeyInfo {
	var key LLMKey
	_ = json.Unmarshal([]byte(s.Meta), &key)
	return &LLMKeyInfo{Provider: key.Provider, BaseURL: key.BaseURL, Model: key.Model,
		UpdatedBy: s.UpdatedBy, UpdatedAt: s.UpdatedAt, LastUsedAt: s.LastUsedAt}
}
