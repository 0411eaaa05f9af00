import { rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/** A model catalogue (models.yaml's format) written to a temporary file, removed after the test: its path, for MODELS_CONFIG. */
export function modelCatalogFile(t: { after(fn: () => void): void }, lines: string[]): string {
  const file = path.join(os.tmpdir(), `agentgate-models-${process.pid}-${Math.random().toString(36).slice(2)}.yaml`);
  writeFileSync(file, lines.join('\n'));
  t.after(() => rmSync(file, { force: true }));
  return file;
}
