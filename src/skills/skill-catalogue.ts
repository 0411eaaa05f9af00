import { readdir, readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import semver from 'semver';
import { latestOf } from '../workflows/modes/template/template-version.ts';
import { parseSkillFile, type SkillEntry } from './skill-file.ts';

/** A skill file that could not be used; its last good version, if it had one, is still served. */
export interface SkillFileProblem {
  file: string;
  problem: string;
}

/**
 * The skills of this deployment (`SKILLS_PATH`), read again by `reload`: a changed file replaces its skill, a
 * removed file takes its skill away, a broken file keeps the version it last had and is reported.
 */
export interface SkillCatalogue {
  /** `name` (its highest version) or `name@version`. */
  find(reference: string): SkillEntry | undefined;
  /** Every version of a skill, highest first. */
  versions(name: string): SkillEntry[];
  /** The highest version of each skill, by name. */
  latest(): SkillEntry[];
  problems(): SkillFileProblem[];
  reload(): Promise<void>;
}

/** What the catalogue knows of one file: how it looked when last read, its last good skill, what is wrong with it now. */
interface FileState {
  fingerprint: string;
  good: SkillEntry | undefined;
  problem: string | undefined;
}

/** Larger files are refused unread; a skill's content is at most 100,000 characters anyway. */
const MAX_FILE_BYTES = 2 * 1024 * 1024;

/**
 * Reads the directory once; a directory that does not exist stops start-up naming the setting. Invalid files do
 * not: they are reported (readiness, logs) and their skills are not served (docs/decisions.md, issue 29).
 */
export async function loadSkillCatalogue(directory: string): Promise<SkillCatalogue> {
  const info = await stat(directory).catch(() => undefined);
  if (!info?.isDirectory()) throw new Error(`skills directory ${directory} does not exist (set SKILLS_PATH)`);
  const catalogue = createSkillCatalogue(directory);
  await catalogue.reload();
  return catalogue;
}

export function createSkillCatalogue(directory: string): SkillCatalogue {
  const files = new Map<string, FileState>();
  let index = buildIndex(directory, files);
  let listingProblem: SkillFileProblem | undefined;
  return {
    find: (reference) => index.byKey.get(reference),
    versions: (name) => index.byName.get(name) ?? [],
    latest: () => [...index.byName.values()].map((versions) => highestOf(versions)).sort((a, b) => a.skill.name.localeCompare(b.skill.name)),
    // Named relative to the directory: /readiness is public, the server's layout is not its business.
    problems: () => [...(listingProblem ? [listingProblem] : []), ...index.problems].map(({ file, problem }) => ({ file: path.relative(directory, file) || '.', problem })),
    async reload() {
      let paths: string[];
      try {
        paths = await skillFiles(directory);
        listingProblem = undefined;
      } catch (error) {
        // The directory went away or cannot be read: keep serving what was loaded.
        listingProblem = { file: directory, problem: `cannot list the skills directory: ${(error as Error).message}` };
        return;
      }
      for (const file of [...files.keys()].filter((known) => !paths.includes(known))) files.delete(file);
      for (const file of paths) files.set(file, await readFileState(file, files.get(file)));
      index = buildIndex(directory, files);
    },
  };
}

/** Every `*.md` below the directory but README.md; hidden entries (a Kubernetes ConfigMap's `..data`, editors' files) are skipped. */
async function skillFiles(directory: string): Promise<string[]> {
  const entries = await readdir(directory, { recursive: true, encoding: 'utf8' });
  return entries
    .filter((entry) => entry.endsWith('.md') && path.basename(entry) !== 'README.md')
    .filter((entry) => !entry.split(path.sep).some((part) => part.startsWith('.')))
    .sort()
    .map((entry) => path.join(directory, entry));
}

/** Re-reads a file only when its size, times or inode changed (an editor's atomic save makes a new inode). */
async function readFileState(file: string, previous: FileState | undefined): Promise<FileState> {
  let fingerprint: string;
  try {
    const info = await stat(file);
    fingerprint = `${info.size}:${info.mtimeMs}:${info.ctimeMs}:${info.ino}`;
    if (previous?.fingerprint === fingerprint) return previous;
    if (info.size > MAX_FILE_BYTES) return { fingerprint, good: previous?.good, problem: `larger than ${MAX_FILE_BYTES} bytes` };
    const parsed = parseSkillFile(file, await readFile(file, 'utf8'), new Date());
    if ('entry' in parsed) return { fingerprint, good: sameAs(previous?.good, parsed.entry), problem: undefined };
    return { fingerprint, good: previous?.good, problem: parsed.problems.join('; ') };
  } catch (error) {
    // Removed or replaced between the listing and the read: the next reload sees how it ended up.
    return { fingerprint: '', good: previous?.good, problem: `cannot be read: ${(error as Error).message}` };
  }
}

/** A file touched without a change keeps its `loaded_at`. */
const sameAs = (previous: SkillEntry | undefined, next: SkillEntry) => (previous?.contentHash === next.contentHash ? previous : next);

interface SkillIndex {
  byKey: Map<string, SkillEntry>;
  byName: Map<string, SkillEntry[]>;
  problems: SkillFileProblem[];
}

/**
 * `name@version` keys, and `name` for the highest version. Files are taken in path order; a second file giving a
 * `name@version` already taken is reported and not served, so the answer does not depend on which was read last.
 */
function buildIndex(directory: string, files: Map<string, FileState>): SkillIndex {
  const byKey = new Map<string, SkillEntry>();
  const problems: SkillFileProblem[] = [];
  for (const [file, state] of [...files].sort(([a], [b]) => a.localeCompare(b))) {
    if (state.problem !== undefined) problems.push({ file, problem: state.problem });
    if (!state.good) continue;
    const key = `${state.good.skill.name}@${state.good.skill.version}`;
    const taken = byKey.get(key);
    if (taken) problems.push({ file, problem: `${key} is already defined in ${path.relative(directory, taken.sourcePath)}` });
    else byKey.set(key, state.good);
  }
  const byName = new Map<string, SkillEntry[]>();
  for (const entry of byKey.values()) byName.set(entry.skill.name, [...byName.get(entry.skill.name) ?? [], entry]);
  for (const [name, versions] of byName) {
    versions.sort((a, b) => semver.rcompare(a.skill.version, b.skill.version));
    byKey.set(name, highestOf(versions));
  }
  return { byKey, byName, problems };
}

/** The highest release; a pre-release only when a skill has nothing else (the rule of templates' versions). */
const highestOf = (versionsHighestFirst: SkillEntry[]): SkillEntry =>
  latestOf(versionsHighestFirst.map((entry) => ({ version: entry.skill.version, entry })).toReversed())!.entry;
