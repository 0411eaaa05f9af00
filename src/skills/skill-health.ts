import type { SkillCatalogue } from './skill-catalogue.ts';

/**
 * The skills line of /readiness. A broken skill file never makes the process unready: its last good version (if
 * any) is still served and every other route works, so taking the process out of a load balancer would only turn
 * one file's typo into an outage. It says `degraded`, naming each file and its problem, until the file is fixed.
 */
export function describeSkillHealth(catalogue: SkillCatalogue): string {
  const loaded = `${catalogue.latest().length} skills loaded`;
  const problems = catalogue.problems();
  if (problems.length === 0) return `ok: ${loaded}`;
  const listed = problems.map(({ file, problem }) => `${file}: ${problem}`).join(' | ');
  return `degraded: ${loaded}; ${problems.length} skill ${problems.length === 1 ? 'file' : 'files'} not loaded (a file that loaded before keeps its last good version): ${listed}`;
}
