import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';

// DESIGN.md: task-state/ is the one writer of task state. Reads may happen anywhere; writes to `tasks` only there.
const SOURCE = path.resolve(import.meta.dirname, '../../../src');
const TASK_WRITE = /updateTable\(\s*'tasks'\s*\)|\bupdate\s+tasks\b/i;

function sourceFiles(directory: string): string[] {
  return readdirSync(directory, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(directory, entry.name);
    if (entry.isDirectory()) return entry.name === 'migrations' ? [] : sourceFiles(full);
    return entry.name.endsWith('.ts') ? [full] : [];
  });
}

test('only task-state/ writes the tasks table', () => {
  const writers = sourceFiles(SOURCE)
    .filter((file) => !file.startsWith(path.join(SOURCE, 'task-state') + path.sep))
    .filter((file) => TASK_WRITE.test(readFileSync(file, 'utf8')))
    .map((file) => path.relative(SOURCE, file));
  assert.deepEqual(writers, []);
});

test('the check sees a write where one is', () => {
  assert.ok(sourceFiles(path.join(SOURCE, 'task-state')).some((file) => TASK_WRITE.test(readFileSync(file, 'utf8'))));
});
