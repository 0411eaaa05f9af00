import { loadConfig } from '../../src/config.ts';
import type { Db } from '../../src/db/database.ts';
import type { ToolContext } from '../../src/tools/registry.ts';

/** A tool call's context for tests of tools that use no database: touching `db` fails the test. */
export function offlineToolContext(overrides: Partial<ToolContext> = {}): ToolContext {
  const db = new Proxy({}, { get: () => { throw new Error('this tool test has no database'); } }) as Db;
  return {
    taskId: 't', sessionId: null, tenantId: 'n', userId: 'u', signal: new AbortController().signal, db, settings: loadConfig({}), ...overrides,
  };
}
