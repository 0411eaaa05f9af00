import { ResourceTemplate, type McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { Caller } from '../auth/caller.ts';
import type { Deps } from '../deps.ts';
import { getSessionFile, listSessionFiles } from '../sessions/session-files.ts';
import { getTaskView } from '../tasks/read-tasks.ts';
import { calling, requireScope } from './tool-calls.ts';

const single = (value: string | string[]) => (Array.isArray(value) ? value.join('/') : value);

/** A task's result, and a session's workspace files, as resources (URI templates a client fills in). */
export function registerResources(server: McpServer, deps: Deps, caller: Caller): void {
  server.registerResource('task-result', new ResourceTemplate('agentgate://tasks/{task_id}/result', { list: undefined }), {
    title: 'A task\'s result', description: 'Its status, result (or error) and usage, as JSON', mimeType: 'application/json',
  }, calling(deps, 'task-result', async (uri, variables) => {
    const view = await getTaskView(deps, caller, single(variables.task_id));
    return { contents: [{ uri: uri.href, mimeType: 'application/json', text: JSON.stringify(view) }] };
  }));

  server.registerResource('session-files', new ResourceTemplate('agentgate://sessions/{session_id}/files', { list: undefined }), {
    title: 'A session\'s files', description: 'The files its tasks\' file tools wrote, as a JSON list', mimeType: 'application/json',
  }, calling(deps, 'session-files', async (uri, variables) => {
    requireScope(caller, 'sessions:read');
    const files = await listSessionFiles(deps, caller, single(variables.session_id), { limit: 1000, offset: 0 });
    return { contents: [{ uri: uri.href, mimeType: 'application/json', text: JSON.stringify(files) }] };
  }));

  server.registerResource('session-file', new ResourceTemplate('agentgate://sessions/{session_id}/files/{+path}', { list: undefined }), {
    title: 'A file of a session', description: 'Text as text, anything else as base64',
  }, calling(deps, 'session-file', async (uri, variables) => {
    requireScope(caller, 'sessions:read');
    const file = await getSessionFile(deps, caller, single(variables.session_id), single(variables.path));
    return {
      contents: [file.isText
        ? { uri: uri.href, mimeType: 'text/plain', text: file.content.toString('utf8') }
        : { uri: uri.href, mimeType: 'application/octet-stream', blob: file.content.toString('base64') }],
    };
  }));
}
