import { readFileSync } from 'node:fs';
import path from 'node:path';

export const ROOT = path.resolve(import.meta.dirname, '../../..');

export function readRepoFile(file: string): string {
  return readFileSync(path.join(ROOT, file), 'utf8');
}
