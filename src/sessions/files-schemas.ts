import { Type } from 'typebox';
import { SESSION_ID_PATTERN } from '../id-formats.ts';

export const SessionFileParams = Type.Object({
  sessionId: Type.String({ pattern: SESSION_ID_PATTERN, description: 'the session UUID or its custom id' }),
  '*': Type.String({ minLength: 1, maxLength: 4096, description: 'the file\'s path in the workspace, e.g. notes/plan.md' }),
});

export const ListSessionFilesQuery = Type.Object({
  limit: Type.Integer({ minimum: 1, maximum: 1000, default: 500 }),
  offset: Type.Integer({ minimum: 0, maximum: 1_000_000, default: 0 }),
});

export const SessionFileView = Type.Object({
  path: Type.String(),
  size: Type.Integer({ description: 'bytes' }),
  sha256: Type.String({ description: 'hex digest of the content' }),
  content_type: Type.String({ description: 'text/plain; charset=utf-8 for UTF-8 text, else application/octet-stream' }),
  created_at: Type.String(),
  updated_at: Type.String(),
});

export const ListSessionFilesResponse = Type.Object({
  session_id: Type.String({ format: 'uuid' }),
  files: Type.Array(SessionFileView),
  total_count: Type.Integer(),
  total_bytes: Type.Integer(),
});

/** The body of a download: the bytes as stored, sent as they are (Fastify does not serialize a Buffer). */
export const FileContent = Type.Unsafe<Buffer>({
  type: 'string', format: 'binary', description: 'the content: text/plain; charset=utf-8 or application/octet-stream',
});
