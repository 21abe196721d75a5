// Drives opsagent's MCP mounts with the official TypeScript SDK client, the
// way an external agent does: Streamable HTTP with a bearer header.
// Input (environment): OPSAGENT_URL, OPSAGENT_TOKEN, PROJECT_ID, TASK_ID.
// Output (stdout): one JSON object that server/mcp_node_test.go checks.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

const { OPSAGENT_URL: base, OPSAGENT_TOKEN: token, PROJECT_ID: project, TASK_ID: task } = process.env;

async function connect(path) {
  const client = new Client({ name: 'opsagent-node-test', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(base + path), {
    requestInit: { headers: { Authorization: `Bearer ${token}` } },
  });
  await client.connect(transport);
  return client;
}

function text(result) {
  return result.content.filter((c) => c.type === 'text').map((c) => c.text).join('\n');
}

const out = {};

const curated = await connect(`/api/mcp/${project}`);
out.server = curated.getServerVersion();
out.protocol = curated.transport.protocolVersion ?? null;
out.curatedTools = (await curated.listTools()).tools.map((t) => t.name);
const search = await curated.callTool({ name: 'search_knowledge', arguments: { query: 'disk full logs' } });
out.search = { isError: search.isError ?? false, text: text(search) };
const tasks = await curated.callTool({ name: 'list_tasks', arguments: { search: 'disk' } });
out.listTasks = { isError: tasks.isError ?? false, structured: tasks.structuredContent ?? null };
await curated.close();

const rest = await connect(`/api/mcp/${project}/_rest`);
const restTools = (await rest.listTools()).tools;
out.restTools = restTools.map((t) => t.name);
out.getTaskSchema = restTools.find((t) => t.name === 'get_tasks_task_id')?.inputSchema ?? null;
const got = await rest.callTool({ name: 'get_tasks_task_id', arguments: { task_id: task } });
out.getTask = { isError: got.isError ?? false, structured: got.structuredContent ?? null };
const bad = await rest.callTool({ name: 'get_tasks', arguments: { limit: 1000 } });
out.badLimit = { isError: bad.isError ?? false, text: text(bad) };
await rest.close();

const org = await connect('/api/mcp/_org');
const me = await org.callTool({ name: 'whoami', arguments: {} });
out.whoami = { isError: me.isError ?? false, structured: me.structuredContent ?? null };
await org.close();

process.stdout.write(JSON.stringify(out) + '\n');
