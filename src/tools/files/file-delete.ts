import type { ToolDefinition } from '../registry.ts';
import { normalizeWorkspacePath } from './workspace-path.ts';
import { PATH_PARAMETER, workspaceOf } from './workspace-scope.ts';
import { deleteWorkspaceFile } from './workspace-store.ts';

export const fileDeleteTool: ToolDefinition = {
  name: 'file_delete',
  description: 'Deletes one file of the session workspace (directories disappear with their last file).',
  parameters: {
    type: 'object',
    properties: { path: PATH_PARAMETER },
    required: ['path'],
    additionalProperties: false,
  },
  category: 'files',
  costPerUseUsd: 0,
  dangerous: true,
  effects: 'database',
  async execute(input, context) {
    const output = { path: normalizeWorkspacePath(String(input.path)), deleted: true };
    await deleteWorkspaceFile(context.db, workspaceOf(context), output.path, (transaction) => context.recordCall?.(transaction, output));
    return output;
  },
};
