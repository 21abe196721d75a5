// transcriptInto renders a stored transcript (GET .../transcript): the
// people's prompts, the agent's answers, each tool call with its result.

import { h } from './dom.js';
import { describeCall } from './decision.js';

export function transcriptInto(log, t) {
  const cards = new Map();
  for (const m of t.messages || []) {
    if (m.role === 'user') {
      log.append(h('div', { class: 'msg user' }, h('span', { class: 'who' }, 'You'), h('div', { class: 'text' }, m.content)));
    } else if (m.role === 'assistant') {
      if (m.content) log.append(h('div', { class: 'msg assistant' }, h('span', { class: 'who' }, 'Agent'), h('div', { class: 'text' }, m.content)));
      for (const c of m.tool_calls || []) {
        const card = h('div', { class: 'tool' },
          h('div', { class: 'tool-head' }, h('span', { class: 'tool-name' }, c.name), ' tool call'),
          h('pre', { class: 'args' }, describeCall(c.arguments)));
        cards.set(c.id, card);
        log.append(card);
      }
    } else if (m.role === 'tool') {
      const out = h('pre', { class: 'output' + (m.is_error ? ' is-error' : '') }, m.content || '(no output)');
      const card = cards.get(m.tool_call_id);
      if (card) { card.append(out); card.classList.toggle('failed', !!m.is_error); } else log.append(out);
    }
  }
  return cards;
}
