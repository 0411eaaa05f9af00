import type { ToolDefinition } from '../registry.ts';
import { normalizeWorkspacePath } from './workspace-path.ts';
import { fileView, PATH_PARAMETER, workspaceOf } from './workspace-scope.ts';
import { writeWorkspaceFile, type WrittenFile } from './workspace-store.ts';

export const fileWriteTool: ToolDefinition = {
  name: 'file_write',
  description: 'Writes a text file in the session workspace, creating it (and its directories) or replacing it; with '
    + '`append: true`, adds to its end instead. The workspace is kept with the session: later tasks of the session read it.',
  parameters: {
    type: 'object',
    properties: {
      path: PATH_PARAMETER,
      content: { type: 'string', description: 'The text to write (UTF-8)' },
      append: { type: 'boolean', description: 'Add to the end of the file instead of replacing it (default false)' },
    },
    required: ['path', 'content'],
    additionalProperties: false,
  },
  category: 'files',
  costPerUseUsd: 0,
  dangerous: true,
  effects: 'database',
  async execute(input, context) {
    const path = normalizeWorkspacePath(String(input.path));
    const added = Buffer.from(String(input.content), 'utf8');
    const append = input.append === true;
    const outputOf = ({ file, created }: WrittenFile) => ({ ...fileView(file), created });
    const written = await writeWorkspaceFile(context.db, workspaceOf(context), context.settings.workspace, path,
      (current) => (append && current ? Buffer.concat([current.content, added]) : added),
      (transaction, result) => context.recordCall?.(transaction, outputOf(result)));
    return outputOf(written);
  },
};
