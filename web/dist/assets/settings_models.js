// Model settings of the organization (inside the LLM key tab): the primary
// model's context window and answer reserve, text-format tool calls, and
// the fallback models tried in order when the primary fails. Each model,
// saved or not, can be tested with one short call.

import { html, useState, useLoad, Loaded, Form, Field, Select, Button, api } from './ui.js';

const modes = [['auto', 'Auto (on for local base URLs)'], ['on', 'On'], ['off', 'Off']];

function num(v) { return v == null || v === '' ? 0 : Number(v); }

function TestResult({ t }) {
  if (!t) return null;
  return html`<p class=${t.ok ? 'muted' : 'error'} role="status">${t.ok
    ? `${t.model} answered in ${t.latency_ms} ms: “${t.reply || '(empty)'}”${t.context_window ? ' · context ' + t.context_window.toLocaleString() + ' tokens' : ''}`
    : `${t.model || 'model'}: ${t.error}`}</p>`;
}

export function ModelSettings({ org }) {
  const base = '/api/organizations/' + org.id + '/model-settings';
  const r = useLoad((signal) => api(base, { signal }), [org.id]);
  const [tests, setTests] = useState({});
  const [rows, setRows] = useState(null);
  async function test(key, body) { const t = await api(base + '/test', { method: 'POST', body }); setTests({ ...tests, [key]: t }); }
  return html`<section aria-labelledby="models-title"><h2 id="models-title">Models</h2>
    <p class="muted">Every request is counted before it is sent and kept inside the context window: older tool results are compacted first, then earlier turns summarized. Fallback models are tried in order when the primary times out, fails with a server error, refuses connections or is rate limited for long.</p>
    <${Loaded} r=${r}>${(m) => {
      const fbs = rows || m.fallbacks;
      return html`<dl class="facts"><dt>Prompt and tools</dt><dd>about ${m.prompt_tokens.toLocaleString()} tokens per request</dd>
        ${m.learned_context_window ? html`<dt>Reported by the server</dt><dd>${m.learned_context_window.toLocaleString()} tokens for ${m.learned_model}</dd>` : null}
        <dt>Failovers, 24 h</dt><dd id="failovers-24h">${m.failovers_24h}</dd></dl>
      <${Form} id="model-settings-form" label="Model settings" onSubmit=${async (d) => {
        const fallbacks = fbs.map((f, i) => {
          const o = { provider: d['fb_provider_' + i], model: d['fb_model_' + i], text_tool_calls: d['fb_text_' + i],
            context_window: num(d['fb_window_' + i]), answer_reserve: num(d['fb_reserve_' + i]) };
          if (d['fb_base_' + i]) o.base_url = d['fb_base_' + i];
          if (d['fb_key_' + i]) o.api_key = d['fb_key_' + i];
          return o;
        });
        await api(base, { method: 'PUT', body: { context_window: num(d.context_window), answer_reserve: num(d.answer_reserve), text_tool_calls: d.text_tool_calls, fallbacks } });
        setRows(null); r.reload();
      }}>
        <div class="grid2"><${Field} label="Context window (tokens, 0 = the model's default)" name="context_window" type="number" min="0" defaultValue=${m.context_window} />
          <${Field} label="Answer reserve (tokens, 0 = default)" name="answer_reserve" type="number" min="0" defaultValue=${m.answer_reserve} />
          <${Select} label="Tool calls written as text" name="text_tool_calls" options=${modes} defaultValue=${m.text_tool_calls} /></div>
        <p><${Button} id="model-test-0" onClick=${() => test(0, { position: 0 })}>Test the primary model</${Button}></p><${TestResult} t=${tests[0]} />
        <h3>Fallback models</h3>
        ${fbs.length === 0 ? html`<p class="muted">None: a failing primary fails the run.</p>` : null}
        ${fbs.map((f, i) => html`<fieldset class="card" id=${'fallback-' + (i + 1)}><legend>Fallback ${i + 1}</legend><div class="grid2">
          <${Select} label="Provider" name=${'fb_provider_' + i} options=${[['openai', 'OpenAI-compatible'], ['anthropic', 'Anthropic']]} defaultValue=${f.provider} />
          <${Field} label="Model" name=${'fb_model_' + i} required defaultValue=${f.model} />
          <${Field} label="Base URL (optional)" name=${'fb_base_' + i} type="url" defaultValue=${f.base_url || ''} />
          <${Field} label=${f.has_api_key ? 'API key (stored; leave empty to keep)' : 'API key (optional for local servers)'} name=${'fb_key_' + i} type="password" autocomplete="off" />
          <${Field} label="Context window" name=${'fb_window_' + i} type="number" min="0" defaultValue=${f.context_window || 0} />
          <${Field} label="Answer reserve" name=${'fb_reserve_' + i} type="number" min="0" defaultValue=${f.answer_reserve || 0} />
          <${Select} label="Tool calls written as text" name=${'fb_text_' + i} options=${modes} defaultValue=${f.text_tool_calls || 'auto'} /></div>
          <${Button} id=${'model-test-' + (i + 1)} onClick=${(e) => {
            const el = e.currentTarget.closest('fieldset').elements;
            const v = (n) => el.namedItem(n + i).value;
            const body = { position: i + 1, provider: v('fb_provider_'), model: v('fb_model_'), context_window: num(v('fb_window_')) };
            if (v('fb_base_')) body.base_url = v('fb_base_');
            if (v('fb_key_')) body.api_key = v('fb_key_');
            // a saved fallback whose key is not retyped is tested as stored
            return test(i + 1, f.position && !v('fb_key_') && f.provider === body.provider && (f.base_url || '') === (body.base_url || '') && f.model === body.model ? { position: f.position } : body);
          }}>Test</${Button}>
          <button type="button" class="secondary" onClick=${() => setRows(fbs.filter((_, j) => j !== i))}>Remove</button>
          <${TestResult} t=${tests[i + 1]} /></fieldset>`)}
        ${fbs.length < 4 ? html`<p><button type="button" class="secondary" id="fallback-add" onClick=${() => setRows([...fbs, { provider: 'openai', model: '' }])}>Add a fallback model</button></p>` : null}
        <button type="submit">Save model settings</button></${Form}>`;
    }}</${Loaded}></section>`;
}
