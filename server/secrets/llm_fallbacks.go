package secrets

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/opsagent/opsagent/store"
)

// An org's fallback models are llm_key secrets named "fallback-1",
// "fallback-2", ... in the order they are tried: each has its own provider,
// base URL and key, encrypted like the primary's.

const fallbackPrefix = "fallback-"

// MaxLLMFallbacks bounds the chain: each fallback is one more wait on a
// failing step.
const MaxLLMFallbacks = 4

// LLMFallback is one fallback as stored, its key decrypted when read for a run.
type LLMFallback struct {
	Position  int
	Key       LLMKey
	HasAPIKey bool
}

// PutLLMFallbacks replaces the org's fallbacks with list, in order. A
// fallback given without a key keeps the key stored at its position when
// provider and base URL are unchanged, so editing one does not mean
// retyping every key.
func (k *Keeper) PutLLMFallbacks(ctx context.Context, orgID, actorID string, list []LLMKey) error {
	old, err := k.LLMFallbacks(ctx, orgID)
	if err != nil {
		return err
	}
	for i, f := range list {
		if f.APIKey == "" && i < len(old) && old[i].Key.Provider == f.Provider && old[i].Key.BaseURL == f.BaseURL {
			f.APIKey = old[i].Key.APIKey
		}
		key := f.APIKey
		f.APIKey = ""
		meta, err := json.Marshal(f)
		if err != nil {
			return err
		}
		if _, _, err := k.Put(ctx, PutInput{OrgID: orgID, Kind: store.SecretKindLLMKey, Name: fallbackPrefix + strconv.Itoa(i+1),
			Meta: string(meta), Value: []byte(key), ActorID: actorID}); err != nil {
			return err
		}
	}
	for i := len(list); i < len(old); i++ {
		if err := k.Delete(ctx, orgID, "", store.SecretKindLLMKey, fallbackPrefix+strconv.Itoa(i+1)); err != nil && !store.IsNotFound(err) {
			return err
		}
	}
	return nil
}

// LLMFallbacks returns the org's fallbacks in order, keys decrypted.
func (k *Keeper) LLMFallbacks(ctx context.Context, orgID string) ([]LLMFallback, error) {
	names := make([]string, MaxLLMFallbacks)
	for i := range names {
		names[i] = fallbackPrefix + strconv.Itoa(i+1)
	}
	rows, err := k.decryptAll(ctx, orgID, "", store.SecretKindLLMKey, names)
	if err != nil {
		return nil, err
	}
	var out []LLMFallback
	for _, r := range rows {
		pos, err := strconv.Atoi(strings.TrimPrefix(r.secret.Name, fallbackPrefix))
		if err != nil {
			return nil, fmt.Errorf("secrets: fallback %q: %w", r.secret.Name, err)
		}
		var key LLMKey
		_ = json.Unmarshal([]byte(r.secret.Meta), &key)
		key.APIKey = string(r.value)
		out = append(out, LLMFallback{Position: pos, Key: key, HasAPIKey: key.APIKey != ""})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Position < out[j].Position })
	return out, nil
}
