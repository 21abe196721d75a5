-- How an org's models are driven (server/model_settings.go): the context
-- window and answer reserve of its primary model (0 = the default for the
-- model's name), whether tool calls written as text are recognised
-- ('auto' = for local base URLs), and the window a model server reported
-- in its own overflow error (learned_model names the model it applies to).
-- Fallback models live in the vault beside the org's LLM key (kind llm_key).
CREATE TABLE org_model_settings (
    org_id                 TEXT PRIMARY KEY REFERENCES organizations(id) ON DELETE CASCADE,
    context_window         INTEGER NOT NULL DEFAULT 0,
    answer_reserve         INTEGER NOT NULL DEFAULT 0,
    text_tool_calls        TEXT NOT NULL DEFAULT 'auto',
    learned_context_window INTEGER NOT NULL DEFAULT 0,
    learned_model          TEXT NOT NULL DEFAULT '',
    updated_by             TEXT NOT NULL DEFAULT '',
    updated_at             TEXT NOT NULL
);
