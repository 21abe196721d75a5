// transcriptInto renders a stored transcript (GET .../transcript): the
// people's prompts, the agent's answers, each tool call as the same card
// the live view draws (live.js), with its result.

import { h } from './dom.js';
import { toolCard } from './live.js';

export function transcriptInto(log, t) {
  const cards = new Map();
  for (const m of t.messages || []) {
    if (m.role === 'user') {
      log.append(h('div', { class: 'msg user' }, h('span', { class: 'who' }, 'You'), h('div', { class: 'text' }, m.content)));
    } else if (m.role === 'assistant') {
      if (m.content) log.append(h('div', { class: 'msg assistant' }, h('span', { class: 'who' }, 'Agent'), h('div', { class: 'text' }, m.content)));
      for (const c of m.tool_calls || []) {
        const card = toolCard({ call_id: c.id, name: c.name, arguments: c.arguments });
        cards.set(c.id, card);
        log.append(card.el);
      }
    } else if (m.role === 'tool') {
      const card = cards.get(m.tool_call_id);
      if (card) card.result({ output: m.content, is_error: m.is_error, duration_ms: m.duration_ms });
      else log.append(h('pre', { class: 'output' + (m.is_error ? ' is-error' : '') }, m.content || ''));
    }
  }
  return cards;
}
