import type { ToolDefinition } from '../registry.ts';
import { normalizeWorkspaceDirectory } from './workspace-path.ts';
import { workspaceOf } from './workspace-scope.ts';
import { searchWorkspace } from './workspace-search.ts';

const MAX_PATTERN_LENGTH = 200;
const MAX_MATCHES = 100;
/** Characters of a matching line shown. */
const MAX_LINE_CHARACTERS = 300;

export const fileSearchTool: ToolDefinition = {
  name: 'file_search',
  description: 'Searches the text files of the session workspace line by line for a text (or, with `regex: true`, a '
    + 'PostgreSQL/POSIX regular expression, where \\y is a word boundary). Returns path:line matches in path order, '
    + `at most ${MAX_MATCHES}.`,
  parameters: {
    type: 'object',
    properties: {
      pattern: { type: 'string', minLength: 1, maxLength: MAX_PATTERN_LENGTH, description: 'The text (or regular expression) to find' },
      regex: { type: 'boolean', description: 'Treat the pattern as a regular expression (default false)' },
      ignore_case: { type: 'boolean', description: 'Match regardless of case (default false)' },
      directory: { type: 'string', maxLength: 1024, description: 'Search only under this relative directory' },
    },
    required: ['pattern'],
    additionalProperties: false,
  },
  category: 'files',
  costPerUseUsd: 0,
  dangerous: false,
  effects: 'none',
  async execute(input, context) {
    const prefix = normalizeWorkspaceDirectory(input.directory === undefined ? undefined : String(input.directory));
    const found = await searchWorkspace(context.db, workspaceOf(context), {
      pattern: String(input.pattern), isRegex: input.regex === true, ignoreCase: input.ignore_case === true, prefix, limit: MAX_MATCHES + 1,
    });
    const matches = found.slice(0, MAX_MATCHES).map((match) => ({
      path: match.path, line: match.line, text: cutLine(match.text.replace(/\r$/, '')),
    }));
    return { matches, ...(found.length > MAX_MATCHES ? { truncated: `only the first ${MAX_MATCHES} matches are shown` } : {}) };
  },
};

const cutLine = (line: string) => (line.length > MAX_LINE_CHARACTERS ? `${line.slice(0, MAX_LINE_CHARACTERS)}…` : line);
