import type { Logger } from 'pino';
import type { SkillCatalogue, SkillFileProblem } from './skill-catalogue.ts';

/**
 * Reads the skills directory again (main.ts runs it every SKILLS_RELOAD_INTERVAL_MS) and logs what changed in its
 * problems: a newly broken file once at error level, a fixed one at info. Polling rather than file-system events:
 * it sees edits on every file system the directory may live on (network volumes, bind mounts, a Kubernetes
 * ConfigMap's symlink swap), where inotify events may never come.
 */
export async function reloadSkills(catalogue: SkillCatalogue, logger: Logger): Promise<void> {
  const before = catalogue.problems();
  await catalogue.reload();
  logProblemChanges(logger, before, catalogue.problems());
}

/** At start-up: every file that could not be used. */
export function logSkillProblems(logger: Logger, problems: SkillFileProblem[]): void {
  for (const { file, problem } of problems) logger.error({ file, problem }, 'skill file not loaded');
}

function logProblemChanges(logger: Logger, before: SkillFileProblem[], after: SkillFileProblem[]): void {
  const key = ({ file, problem }: SkillFileProblem) => `${file}\n${problem}`;
  const beforeKeys = new Set(before.map(key));
  const afterKeys = new Set(after.map(key));
  logSkillProblems(logger, after.filter((problem) => !beforeKeys.has(key(problem))));
  for (const { file } of before.filter((problem) => !afterKeys.has(key(problem)))) {
    if (!after.some((problem) => problem.file === file)) logger.info({ file }, 'skill file loaded again');
  }
}
