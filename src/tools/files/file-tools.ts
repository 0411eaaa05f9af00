import type { ToolDefinition } from '../registry.ts';
import { fileDeleteTool } from './file-delete.ts';
import { fileEditTool } from './file-edit.ts';
import { fileListTool } from './file-list.ts';
import { fileReadTool } from './file-read.ts';
import { fileSearchTool } from './file-search.ts';
import { fileWriteTool } from './file-write.ts';

/** The tools of a session's workspace (issue 15, scope 5). */
export const FILE_TOOLS: readonly ToolDefinition[] = [fileReadTool, fileWriteTool, fileEditTool, fileListTool, fileSearchTool, fileDeleteTool];
