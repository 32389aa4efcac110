// An MCP server offering the Skills extension on the official TypeScript SDK v2
// (`@modelcontextprotocol/server` 2.x and its `ext/skills`), used by umcp's tests of skills and
// `resources/directory/read`. Over stdio (the handshake era) by default; with PORT set, over
// Streamable HTTP at http://127.0.0.1:<PORT>/mcp in the stateless protocol 2026-07-28 only,
// printing `listening on port <PORT>` once it accepts connections.
//
// Usage: node ts_v2_skills_server.mjs [dynamic]      PORT=<port> node ts_v2_skills_server.mjs
//
// The catalog (built by the SDK from files in memory, with directory pages of two entries):
//   skill://pdf-processing/{SKILL.md, references/FORMS.md, templates/invoice.md,
//                           templates/purchase-order.md, templates/regional/eu-invoice.md}
//   skill://git-workflow/SKILL.md
// With `dynamic`, one dynamic skill instead, served by a source of its own:
//   skill://reports/daily/{SKILL.md, data/today.csv}, whose directory reads also list
//   skill://elsewhere/secret.md, a child outside the skill that a client must not follow.

import http from 'node:http';
import { McpServer, createMcpHandler } from '@modelcontextprotocol/server';
import { StdioServerTransport } from '@modelcontextprotocol/server/stdio';
import { DIRECTORY_MIME_TYPE, SkillsExtension, memorySkillFiles } from '@modelcontextprotocol/server/ext/skills';

const FILES = {
    'pdf-processing/SKILL.md':
        '---\nname: pdf-processing\ndescription: Extract, fill, and assemble PDF documents\n---\n\nPick a template from `templates/`.\n',
    'pdf-processing/references/FORMS.md': 'Field names are case-sensitive.\n',
    'pdf-processing/templates/invoice.md': '# Invoice\n',
    'pdf-processing/templates/purchase-order.md': '# Purchase order\n',
    'pdf-processing/templates/regional/eu-invoice.md': '# EU invoice\n',
    'git-workflow/SKILL.md': "---\nname: git-workflow\ndescription: Follow this team's Git conventions\n---\n\nRebase, then merge.\n"
};

const DAILY_MD = "---\nname: daily\ndescription: Assemble today's report\n---\n\nRead `data/`.\n";
const DAILY = {
    'skill://reports/daily/SKILL.md': DAILY_MD,
    'skill://reports/daily/data/today.csv': 'region,total\neu,3\n'
};

/** A source serving one dynamic skill, as a server generating its files would. */
const dynamicSource = {
    async list() {
        return { skills: [dailyEntry()] };
    },
    async get(uri) {
        return uri === 'skill://reports/daily/SKILL.md' ? dailyEntry() : undefined;
    },
    async read(uri) {
        const text = DAILY[uri];
        return text === undefined ? undefined : { text, mimeType: 'text/plain' };
    },
    async readDirectory(uri) {
        const file = (u, name) => ({ uri: u, name, mimeType: 'text/plain' });
        const dir = (u, name) => ({ uri: u, name, mimeType: DIRECTORY_MIME_TYPE });
        if (uri === 'skill://reports/daily') {
            return {
                resources: [
                    file('skill://reports/daily/SKILL.md', 'SKILL.md'),
                    dir('skill://reports/daily/data', 'data'),
                    file('skill://elsewhere/secret.md', 'secret.md')
                ]
            };
        }
        if (uri === 'skill://reports/daily/data') {
            return { resources: [file('skill://reports/daily/data/today.csv', 'today.csv')] };
        }
        return undefined;
    }
};

function dailyEntry() {
    return {
        uri: 'skill://reports/daily/SKILL.md',
        frontmatter: { name: 'daily', description: "Assemble today's report" },
        resources: 'dynamic'
    };
}

const dynamic = process.argv.includes('dynamic');
const skills = dynamic
    ? new SkillsExtension({ source: dynamicSource })
    : await SkillsExtension.load(memorySkillFiles(FILES), { pageSize: 2 });

function factory() {
    const server = new McpServer(
        { name: 'umcp-ts-v2-skills-peer', version: '1.0.0' },
        { capabilities: { resources: {} } }
    );
    skills.attach(server);
    return server;
}

if (process.env.PORT === undefined) {
    await factory().connect(new StdioServerTransport());
} else {
    const handler = createMcpHandler(factory, { legacy: 'reject' });
    const port = Number(process.env.PORT);
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
            const request = new Request(`http://127.0.0.1:${port}${req.url}`, {
                method: req.method,
                headers,
                body: req.method === 'GET' || req.method === 'HEAD' ? undefined : body
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
}
