-- Sessions some of whose token counts this server estimated itself,
-- because the model server's stream carried no usage (older Ollama and
-- llama.cpp builds, proxies): their tokens and cost are marked estimated
-- wherever they are shown. A row exists only for such sessions.
CREATE TABLE session_tokens_estimated (
    session_id TEXT PRIMARY KEY REFERENCES agent_sessions(id) ON DELETE CASCADE,
    org_id     TEXT NOT NULL,
    created_at TEXT NOT NULL
);
