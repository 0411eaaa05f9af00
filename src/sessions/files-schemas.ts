import { Type } from 'typebox';
import { SESSION_ID_PATTERN } from '../id-formats.ts';

export const SessionFileParams = Type.Object({
  sessionId: Type.String({ pattern: SESSION_ID_PATTERN, description: 'the session UUID or its custom id' }),
  '*': Type.String({ minLength: 1, maxLength: 4096, description: 'the file\'s path in the workspace, e.g. notes/plan.md' }),
});

export const ListSessionFilesQuery = Type.Object({
  path: Type.Optional(Type.String({ maxLength: 4096, description: 'a directory of the workspace: only the files under it are listed (Shannon\'s `path`)' })),
  limit: Type.Integer({ minimum: 1, maximum: 1000, default: 500 }),
  offset: Type.Integer({ minimum: 0, maximum: 1_000_000, default: 0 }),
});

export const SessionFileView = Type.Object({
  path: Type.String(),
  name: Type.String({ description: 'the last segment of the path' }),
  is_dir: Type.Literal(false, { description: 'always false: a directory is a prefix of paths, not an entry (Shannon\'s field)' }),
  size: Type.Integer({ description: 'bytes' }),
  size_bytes: Type.Integer({ description: 'bytes, as Shannon names them' }),
  sha256: Type.String({ description: 'hex digest of the content' }),
  content_type: Type.String({ description: 'text/plain; charset=utf-8 for UTF-8 text, else application/octet-stream' }),
  created_at: Type.String(),
  updated_at: Type.String(),
});

export const ListSessionFilesResponse = Type.Object({
  success: Type.Literal(true, { description: 'Shannon\'s envelope; a failure is an error status' }),
  session_id: Type.String({ format: 'uuid' }),
  files: Type.Array(SessionFileView),
  total_count: Type.Integer(),
  total_bytes: Type.Integer(),
});

/**
 * The body of a download: the bytes as stored, sent as they are (Fastify does not serialize a Buffer); or, for a
 * client that asks for JSON, Shannon's envelope (see session-files.ts `wantsJsonFile`), also sent as bytes.
 */
export const FileContent = Type.Unsafe<Buffer>({
  type: 'string', format: 'binary',
  description: 'the content: text/plain; charset=utf-8 or application/octet-stream. A request that accepts application/json (or, as Shannon\'s Python SDK does, '
    + 'sends Content-Type: application/json and accepts anything) gets {success, path, content, encoding (utf-8 or base64), content_type, size_bytes} instead',
});
