// A host for umcp bridge's tests, on the official TypeScript SDK: the v1 client
// (`@modelcontextprotocol/sdk` 1.32, protocol 2025-11-25) or the v2 client
// (`@modelcontextprotocol/client` 2.4, pinned to 2026-07-28). It connects to the bridge over
// stdio (it spawns it) or Streamable HTTP (with a bearer token), runs the steps of its plan,
// and prints one JSON object with what each step saw.
//
// Usage: node ts_host.mjs '<plan JSON>'
//   plan: { sdk: "v1" | "v2",
//           stdio?: { command, args }, http?: { url, token },
//           elicit?: { action, content }      answers every elicitation (declares it)
//           sample?: "text"                   answers every sampling request (declares it)
//           roots?: [ { uri, name } ]         answers roots/list (declares it)
//           steps: [ { do: "list" }
//                  | { do: "call", tool, args, progress?: bool, abort_after_progress?: n }
//                  | { do: "prompt", name, args } | { do: "read", uri }
//                  | { do: "info" } ] }
// Output: { steps: [...], elicitations: [messages], protocol: "<negotiated version>" }

const plan = JSON.parse(process.argv[2]);

async function load() {
    if (plan.sdk === 'v1') {
        const { Client } = await import('@modelcontextprotocol/sdk/client/index.js');
        const { StdioClientTransport } = await import('@modelcontextprotocol/sdk/client/stdio.js');
        const { StreamableHTTPClientTransport } = await import('@modelcontextprotocol/sdk/client/streamableHttp.js');
        const types = await import('@modelcontextprotocol/sdk/types.js');
        const handle = (client, method, handler) => {
            const schema = {
                'elicitation/create': types.ElicitRequestSchema,
                'sampling/createMessage': types.CreateMessageRequestSchema,
                'roots/list': types.ListRootsRequestSchema
            }[method];
            client.setRequestHandler(schema, handler);
        };
        return { Client, StdioClientTransport, StreamableHTTPClientTransport, handle, options: {} };
    }
    const { Client, StreamableHTTPClientTransport } = await import('@modelcontextprotocol/client');
    const { StdioClientTransport } = await import('@modelcontextprotocol/client/stdio');
    const handle = (client, method, handler) => client.setRequestHandler(method, handler);
    const options = { versionNegotiation: { mode: { pin: '2026-07-28' } } };
    return { Client, StdioClientTransport, StreamableHTTPClientTransport, handle, options };
}

async function main() {
    const sdk = await load();
    const capabilities = {};
    if (plan.elicit) capabilities.elicitation = { form: {} };
    if (plan.sample) capabilities.sampling = {};
    if (plan.roots) capabilities.roots = { listChanged: true };
    const client = new sdk.Client(
        { name: `ts-${plan.sdk}-host`, version: '1.0.0' },
        { capabilities, ...sdk.options }
    );
    const elicitations = [];
    if (plan.elicit) {
        sdk.handle(client, 'elicitation/create', async request => {
            elicitations.push(request.params.message);
            return plan.elicit;
        });
    }
    if (plan.sample) {
        sdk.handle(client, 'sampling/createMessage', async () => ({
            model: 'test-model',
            role: 'assistant',
            content: { type: 'text', text: plan.sample }
        }));
    }
    if (plan.roots) {
        sdk.handle(client, 'roots/list', async () => ({ roots: plan.roots }));
    }
    const transport = plan.stdio
        ? new sdk.StdioClientTransport({ command: plan.stdio.command, args: plan.stdio.args, env: { ...process.env }, stderr: 'inherit' })
        : new sdk.StreamableHTTPClientTransport(new URL(plan.http.url), {
              requestInit: { headers: { Authorization: `Bearer ${plan.http.token}` } }
          });
    await client.connect(transport);
    const steps = [];
    for (const step of plan.steps) {
        steps.push(await run(client, step).catch(e => ({ error: String(e && e.message ? e.message : e) })));
    }
    const protocol = client.transport?.protocolVersion ?? client.getNegotiatedProtocolVersion?.() ?? null;
    await client.close();
    process.stdout.write(JSON.stringify({ steps, elicitations, protocol }) + '\n');
}

async function run(client, step) {
    switch (step.do) {
        case 'list': {
            const listed = await client.listTools();
            return { tools: listed.tools.map(t => t.name) };
        }
        case 'info':
            return { server: client.getServerVersion(), capabilities: client.getServerCapabilities() };
        case 'prompt': {
            const got = await client.getPrompt({ name: step.name, arguments: step.args ?? {} });
            return { messages: got.messages.map(m => m.content.text ?? null) };
        }
        case 'read': {
            const read = await client.readResource({ uri: step.uri });
            return { contents: read.contents.map(c => c.text ?? null) };
        }
        case 'call':
            return call(client, step);
        default:
            throw new Error(`unknown step ${step.do}`);
    }
}

async function call(client, step) {
    const progress = [];
    const abort = new AbortController();
    const options = { timeout: 60000, signal: abort.signal };
    if (step.progress || step.abort_after_progress) {
        options.onprogress = p => {
            progress.push(p.progress);
            if (step.abort_after_progress && progress.length >= step.abort_after_progress) abort.abort('enough');
        };
    }
    try {
        const params = { name: step.tool, arguments: step.args ?? {} };
        // v1 takes a result schema before the options; v2 the options alone.
        const result = plan.sdk === 'v1' ? await client.callTool(params, undefined, options) : await client.callTool(params, options);
        const text = result.content.map(c => c.text ?? '').join('');
        return { text, isError: result.isError ?? false, progress, structured: result.structuredContent ?? null };
    } catch (e) {
        return { error: String(e && e.message ? e.message : e), progress, aborted: abort.signal.aborted };
    }
}

main().catch(e => {
    process.stderr.write(`ts_host: ${e && e.stack ? e.stack : e}\n`);
    process.exit(1);
});
