// readSSE parses a text/event-stream body (the WHATWG format: `event:`,
// `data:`, `id:` lines, a blank line ends an event, `:` starts a comment)
// into {id, type, data} objects; data is parsed as JSON when it is JSON.
export async function* readSSE(body) {
  const reader = body.pipeThrough(new TextDecoderStream()).getReader();
  let buf = '';
  let ev = fresh();
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buf += value;
      let nl;
      while ((nl = buf.indexOf('\n')) >= 0) {
        let line = buf.slice(0, nl);
        buf = buf.slice(nl + 1);
        if (line.endsWith('\r')) line = line.slice(0, -1);
        if (line === '') {
          if (ev.data.length) yield finish(ev);
          ev = fresh();
          continue;
        }
        if (line.startsWith(':')) continue;
        const i = line.indexOf(':');
        const field = i < 0 ? line : line.slice(0, i);
        let val = i < 0 ? '' : line.slice(i + 1);
        if (val.startsWith(' ')) val = val.slice(1);
        if (field === 'event') ev.type = val;
        else if (field === 'data') ev.data.push(val);
        else if (field === 'id') ev.id = Number(val);
      }
    }
  } finally {
    // Also runs when the consumer stops early: close the connection.
    reader.cancel().catch(() => {});
  }
}

function fresh() { return { id: null, type: 'message', data: [] }; }

function finish(ev) {
  const raw = ev.data.join('\n');
  let data;
  try { data = JSON.parse(raw); } catch { data = raw; }
  return { id: ev.id, type: ev.type, data };
}
