import { readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { isProcessAlive } from './postmaster-process.ts';

/**
 * Which process owns the embedded server: the one that started it, or took it over after its owner died.
 * Only the owner stops it. Anything else that finds it running (`npm run keys` beside a running gateway,
 * a second gateway on the same DATA_DIR) uses it as a guest and leaves it running when it exits.
 */
const OWNER_FILE = 'postgres-owner.pid';

export async function claimOwnership(dataDir: string): Promise<void> {
  await writeFile(path.join(dataDir, OWNER_FILE), `${process.pid}\n`);
}

/** True when no other live process owns the server: it was ours, its owner died, or nobody claimed it. */
export async function mayOwn(dataDir: string): Promise<boolean> {
  const owner = await readOwner(dataDir);
  return owner === undefined || owner === process.pid || !(await isProcessAlive(owner));
}

export async function releaseOwnership(dataDir: string): Promise<void> {
  if (await readOwner(dataDir) === process.pid) await rm(path.join(dataDir, OWNER_FILE), { force: true });
}

async function readOwner(dataDir: string): Promise<number | undefined> {
  const text = await readFile(path.join(dataDir, OWNER_FILE), 'utf8').catch(() => '');
  const pid = Number.parseInt(text.trim(), 10);
  return Number.isInteger(pid) && pid > 0 ? pid : undefined;
}
