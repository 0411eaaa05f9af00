import { execFileSync } from 'node:child_process';

/** The commit under test; the gateway runs from the working tree, so uncommitted changes in src/ are named. */
export function describeCommit(root: string): string {
  try {
    const git = (...args: string[]) => execFileSync('git', args, { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
    const commit = git('rev-parse', '--short', 'HEAD');
    const changed = git('status', '--porcelain', '--', 'src').split('\n').filter(Boolean).length;
    return changed > 0 ? `${commit} + ${changed} uncommitted file(s) in src/` : commit;
  } catch {
    return 'unknown';
  }
}
