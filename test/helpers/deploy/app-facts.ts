import { loadConfig } from '../../../src/config.ts';
import { readRepoFile } from './repo-files.ts';

/** How long a process drains after SIGTERM (SHUTDOWN_GRACE_SECONDS' default): grace periods in the manifests must exceed it. */
export const SHUTDOWN_DRAIN_SECONDS = loadConfig({}).shutdownGraceSeconds;

/** Arguments after `node src/main.ts` that main.ts accepts for a long-running or one-shot container. */
export function mainArgumentProblem(args: string[]): string | undefined {
  const [command, ...rest] = args;
  if (command === 'migrate') return rest.length === 0 ? undefined : `migrate takes no arguments, got ${rest.join(' ')}`;
  if (command !== 'serve') return `unknown command ${command}`;
  if (rest.length === 0) return undefined;
  if (rest.length !== 2 || rest[0] !== '--role') return `serve takes only --role <role>, got ${rest.join(' ')}`;
  return ['all', 'gateway', 'worker'].includes(rest[1]) ? undefined : `unknown role ${rest[1]}`;
}

/** The settings README's "Settings" table documents (src/config.ts reads each of them). */
export function documentedSettings(): Set<string> {
  const readme = readRepoFile('README.md');
  const table = readme.slice(readme.indexOf('## Settings'), readme.indexOf('\n## ', readme.indexOf('## Settings') + 1));
  const rows = table.split('\n').filter((line) => line.startsWith('| `'));
  return new Set(rows.flatMap((row) => [...row.split('|')[1].matchAll(/`([A-Z][A-Z0-9_]*)`/g)].map((match) => match[1])));
}
