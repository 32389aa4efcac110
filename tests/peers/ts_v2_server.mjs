// A small MCP server on the official TypeScript SDK v2 (`@modelcontextprotocol/server` 2.x),
// used by umcp's interop tests: Streamable HTTP at http://127.0.0.1:<PORT>/mcp, speaking the
// stateless protocol 2026-07-28 only (`legacy: 'reject'`).
//
// Usage: PORT=<port> node ts_v2_server.mjs
// Tools: echo(message); confirm(question), which asks for confirmation in an input round (MRTR);
// region(region), whose argument is mirrored into the Mcp-Param-Region header;
// add_tool(name), which adds a tool to every later instance and tells subscriptions/listen
// subscribers (`handler.notify.toolsChanged()`); demo://counted, with a one-minute cache hint,
// whose reads counted_reads() counts and touch_counted() announces as updated.
// Prints `listening on port <PORT>` once it accepts connections.

import http from 'node:http';
import * as z from 'zod';
import { McpServer, acceptedContent, createMcpHandler, inputRequired } from '@modelcontextprotocol/server';

// Tools added at run time: every per-request instance registers them.
const added = [];
// How often demo://counted was read: a client cache shows as fewer reads.
let countedReads = 0;

function factory() {
    const server = new McpServer(
        { name: 'umcp-ts-v2-peer', version: '1.0.0' },
        {
            instructions: 'A TypeScript v2 test server for umcp interop tests.',
            // Resource subscriptions are honoured only when advertised.
            capabilities: { resources: { subscribe: true } }
        }
    );
    server.registerTool(
        'echo',
        { description: 'Echo the message back.', inputSchema: z.object({ message: z.string() }) },
        async ({ message }) => ({ content: [{ type: 'text', text: message }] })
    );
    const confirmation = z.object({ confirm: z.boolean() });
    server.registerTool(
        'confirm',
        { description: 'Ask the user to confirm, in an input round.', inputSchema: z.object({ question: z.string() }) },
        async ({ question }, ctx) => {
            const answer = acceptedContent(ctx.mcpReq.inputResponses, 'confirm', confirmation);
            if (answer === undefined) {
                return inputRequired({
                    inputRequests: {
                        confirm: inputRequired.elicit({ message: question, requestedSchema: confirmation })
                    }
                });
            }
            return { content: [{ type: 'text', text: `confirmed: ${answer.confirm}` }] };
        }
    );
    server.registerTool(
        'region',
        {
            description: 'Echo the region, mirrored into the Mcp-Param-Region header.',
            inputSchema: z.object({ region: z.string().meta({ 'x-mcp-header': 'Region' }) })
        },
        async ({ region }) => ({ content: [{ type: 'text', text: `region ${region}` }] })
    );
    server.registerTool(
        'add_tool',
        { description: 'Add a tool at run time and notify subscribers.', inputSchema: z.object({ name: z.string() }) },
        async ({ name }) => {
            if (!added.includes(name)) added.push(name);
            handler.notify.toolsChanged();
            return { content: [{ type: 'text', text: `added ${name}` }] };
        }
    );
    server.registerResource(
        'counted',
        'demo://counted',
        { mimeType: 'text/plain', cacheHint: { ttlMs: 60000, cacheScope: 'public' } },
        async uri => {
            countedReads += 1;
            return { contents: [{ uri: uri.href, text: `read ${countedReads} times` }] };
        }
    );
    server.registerTool(
        'counted_reads',
        { description: 'How often demo://counted was read.' },
        async () => ({ content: [{ type: 'text', text: String(countedReads) }] })
    );
    server.registerTool(
        'touch_counted',
        { description: 'Announce that demo://counted changed.' },
        async () => {
            handler.notify.resourceUpdated('demo://counted');
            return { content: [{ type: 'text', text: 'touched' }] };
        }
    );
    for (const name of added) {
        server.registerTool(name, { description: 'A tool added at run time.' }, async () => ({
            content: [{ type: 'text', text: `${name} was added at run time` }]
        }));
    }
    return server;
}

const handler = createMcpHandler(factory, { legacy: 'reject' });
const port = Number(process.env.PORT ?? 3000);

// A bridge from node:http to the web-standard handler.
const httpServer = http.createServer(async (req, res) => {
    try {
        const chunks = [];
        for await (const chunk of req) chunks.push(chunk);
        const body = chunks.length > 0 ? Buffer.concat(chunks) : undefined;
        const headers = new Headers();
        for (const [name, value] of Object.entries(req.headers)) {
            if (Array.isArray(value)) value.forEach(v => headers.append(name, v));
            else if (value !== undefined) headers.set(name, value);
        }
        const controller = new AbortController();
        res.on('close', () => controller.abort());
        const request = new Request(`http://127.0.0.1:${port}${req.url}`, {
            method: req.method,
            headers,
            body: req.method === 'GET' || req.method === 'HEAD' ? undefined : body,
            signal: controller.signal
        });
        const response = await handler.fetch(request);
        res.writeHead(response.status, Object.fromEntries(response.headers.entries()));
        if (response.body) {
            for await (const chunk of response.body) res.write(chunk);
        }
        res.end();
    } catch (error) {
        if (!res.headersSent) res.writeHead(500);
        res.end(String(error));
    }
});
httpServer.listen(port, '127.0.0.1', () => console.log(`listening on port ${port}`));
