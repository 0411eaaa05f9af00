import type { ToolDefinition } from '../registry.ts';
import { normalizeWorkspacePath } from './workspace-path.ts';
import { PATH_PARAMETER, workspaceOf } from './workspace-scope.ts';
import { readWorkspaceFile, type WorkspaceFile } from './workspace-store.ts';

const DEFAULT_LINES = 2000;
const MAX_LINES = 10_000;
/** What one read hands back at most; the rest is there for the next read, from `next_offset`. */
const MAX_READ_CHARACTERS = 50_000;

export const fileReadTool: ToolDefinition = {
  name: 'file_read',
  description: 'Reads a text file of the session workspace, a range of lines at a time. Returns the lines with the file\'s '
    + 'size, sha256 and total line count; when more remain, `next_offset` is the offset of the next read. Binary files are refused.',
  parameters: {
    type: 'object',
    properties: {
      path: PATH_PARAMETER,
      offset: { type: 'integer', minimum: 0, description: 'Lines to skip from the start (default 0)' },
      limit: { type: 'integer', minimum: 1, maximum: MAX_LINES, description: `Lines to return at most (default ${DEFAULT_LINES})` },
    },
    required: ['path'],
    additionalProperties: false,
  },
  category: 'files',
  costPerUseUsd: 0,
  dangerous: false,
  effects: 'none',
  async execute(input, context) {
    const path = normalizeWorkspacePath(String(input.path));
    const file = await readWorkspaceFile(context.db, workspaceOf(context), path);
    if (!file) throw new Error(`no such file: ${path}`);
    return readLines(file, Number(input.offset ?? 0), Number(input.limit ?? DEFAULT_LINES));
  },
};

function readLines(file: WorkspaceFile, offset: number, limit: number) {
  if (!file.isText) {
    throw new Error(`${file.path} is a binary file (${file.size} bytes): file_read reads text only; download it from GET /api/v1/sessions/{id}/files/${file.path}`);
  }
  const lines = splitLines(file.content.toString('utf8'));
  if (offset > 0 && offset >= lines.length) throw new Error(`offset ${offset} is past the end of ${file.path} (${lines.length} lines)`);
  const taken = takeLines(lines.slice(offset, offset + limit));
  const end = offset + taken.count;
  return {
    path: file.path, size: file.size, sha256: file.sha256, total_lines: lines.length,
    first_line: taken.count === 0 ? 0 : offset + 1, last_line: end, content: taken.text,
    ...(end < lines.length ? { next_offset: end } : {}),
  };
}

/** A final newline ends the last line rather than starting an empty one. */
function splitLines(text: string): string[] {
  if (text === '') return [];
  const lines = text.split('\n');
  if (lines.at(-1) === '') lines.pop();
  return lines;
}

/** As many whole lines as fit in MAX_READ_CHARACTERS; a first line longer than that alone comes cut. */
function takeLines(lines: string[]): { text: string; count: number } {
  let characters = 0;
  let count = 0;
  while (count < lines.length && characters + lines[count].length + 1 <= MAX_READ_CHARACTERS) characters += lines[count++].length + 1;
  if (count === 0 && lines.length > 0) return { text: `${lines[0].slice(0, MAX_READ_CHARACTERS)}… [line cut at ${MAX_READ_CHARACTERS} characters]`, count: 1 };
  return { text: lines.slice(0, count).join('\n'), count };
}
