import type { ToolDefinition } from '../registry.ts';
import { normalizeWorkspacePath } from './workspace-path.ts';
import { fileView, PATH_PARAMETER, workspaceOf } from './workspace-scope.ts';
import { writeWorkspaceFile, type WorkspaceFile } from './workspace-store.ts';

export const fileEditTool: ToolDefinition = {
  name: 'file_edit',
  description: 'Replaces one exact piece of text in a text file of the session workspace. `old_text` must occur exactly '
    + 'once in the file (include surrounding lines to make it unique); it is replaced by `new_text`.',
  parameters: {
    type: 'object',
    properties: {
      path: PATH_PARAMETER,
      old_text: { type: 'string', minLength: 1, description: 'The text to replace, exactly as it is in the file' },
      new_text: { type: 'string', description: 'The text to put in its place' },
    },
    required: ['path', 'old_text', 'new_text'],
    additionalProperties: false,
  },
  category: 'files',
  costPerUseUsd: 0,
  dangerous: true,
  effects: 'database',
  async execute(input, context) {
    const path = normalizeWorkspacePath(String(input.path));
    const oldText = String(input.old_text);
    const newText = String(input.new_text);
    let line = 0;
    const { file } = await writeWorkspaceFile(context.db, workspaceOf(context), context.settings.workspace, path, (current) => {
      const text = textOf(current, path);
      const at = onlyOccurrence(text, oldText, path);
      line = lineAt(text, at);
      return Buffer.from(text.slice(0, at) + newText + text.slice(at + oldText.length), 'utf8');
    }, (transaction, written) => context.recordCall?.(transaction, { ...fileView(written.file), line }));
    return { ...fileView(file), line };
  },
};

function textOf(file: WorkspaceFile | undefined, path: string): string {
  if (!file) throw new Error(`no such file: ${path}`);
  if (!file.isText) throw new Error(`${path} is a binary file: file_edit edits text only`);
  return file.content.toString('utf8');
}

/** Where the text occurs; overlapping occurrences count, so that "aa" in "aaa" is ambiguous as it looks. */
function onlyOccurrence(text: string, oldText: string, path: string): number {
  const first = text.indexOf(oldText);
  if (first === -1) throw new Error(`old_text does not occur in ${path}: it must match the file exactly, white space included`);
  if (text.indexOf(oldText, first + 1) !== -1) {
    throw new Error(`old_text occurs more than once in ${path}: include more of the surrounding text so that it matches once`);
  }
  return first;
}

const lineAt = (text: string, index: number) => text.slice(0, index).split('\n').length;
