import type { Deps } from '../deps.ts';
import type { App } from '../http/app-type.ts';
import { ErrorBody } from '../http/error-body.ts';
import { FileContent, ListSessionFilesQuery, ListSessionFilesResponse, SessionFileParams } from './files-schemas.ts';
import { SessionIdParams } from './schemas.ts';
import { contentTypeOf, getSessionFile, jsonFile, listSessionFiles, wantsJsonFile } from './session-files.ts';

const errors = { 400: ErrorBody, 401: ErrorBody, 403: ErrorBody, 404: ErrorBody, 429: ErrorBody };
const read = { scope: 'sessions:read' };

/** The session's workspace as its file tools left it (issue 15, scope 10): owner only, read only. */
export async function sessionFileRoutes(app: App, deps: Deps) {
  app.get('/api/v1/sessions/:sessionId/files', {
    config: read,
    schema: {
      tags: ['sessions'], summary: 'The files of the session workspace, in path order',
      params: SessionIdParams, querystring: ListSessionFilesQuery, response: { 200: ListSessionFilesResponse, ...errors },
    },
  }, async (request) => listSessionFiles(deps, request.caller, request.params.sessionId, request.query));

  app.get('/api/v1/sessions/:sessionId/files/*', {
    config: read,
    schema: {
      tags: ['sessions'], summary: 'Download one file of the session workspace',
      params: SessionFileParams,
      response: { 200: FileContent, ...errors },
    },
  }, async (request, reply) => {
    const file = await getSessionFile(deps, request.caller, request.params.sessionId, request.params['*']);
    // Two forms of one file (wantsJsonFile): caches keep them apart, each by its own tag.
    reply.header('vary', 'Accept, Content-Type');
    if (wantsJsonFile(request)) return reply.type('application/json; charset=utf-8').header('etag', `"${file.sha256}.json"`).send(Buffer.from(JSON.stringify(jsonFile(file))));
    // Served as an attachment that is never sniffed: a file an agent wrote must not run as a page of this origin.
    return reply.type(contentTypeOf(file)).header('content-disposition', attachment(file.path))
      .header('x-content-type-options', 'nosniff').header('etag', `"${file.sha256}"`).send(file.content);
  });
}

/** RFC 6266: an ASCII fallback name, and the exact one in RFC 5987 encoding. */
function attachment(path: string): string {
  const name = path.slice(path.lastIndexOf('/') + 1);
  const fallback = name.replace(/[^A-Za-z0-9._-]/g, '_');
  return `attachment; filename="${fallback}"; filename*=UTF-8''${encodeURIComponent(name).replace(/['()*]/g, (character) => `%${character.charCodeAt(0).toString(16).toUpperCase()}`)}`;
}
