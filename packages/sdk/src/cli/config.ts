import { readFile, mkdir, writeFile, chmod } from 'node:fs/promises';
import { homedir } from 'node:os';
import path from 'node:path';

export interface Profile { url?: string; api_key?: string; tenant_id?: string }
export interface ConfigFile { default_profile?: string; profiles?: Record<string, Profile> }

export interface Connection { url: string; apiKey?: string; tenantId?: string; profile?: string }

export const DEFAULT_URL = 'http://127.0.0.1:8080';

/** `$XDG_CONFIG_HOME/agentgate/config.json`, else `~/.config/agentgate/config.json`; AGENTGATE_CONFIG overrides. */
export function configPath(env: NodeJS.ProcessEnv = process.env): string {
  if (env.AGENTGATE_CONFIG) return env.AGENTGATE_CONFIG;
  const base = env.XDG_CONFIG_HOME || path.join(homedir(), '.config');
  return path.join(base, 'agentgate', 'config.json');
}

export async function readConfig(file: string): Promise<ConfigFile> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return {};
    throw error;
  }
  try {
    return JSON.parse(text) as ConfigFile;
  } catch (error) {
    throw new UsageError(`${file} is not valid JSON: ${(error as Error).message}`);
  }
}

/** Writes the file readable by its owner only: it holds API keys. */
export async function writeConfig(file: string, config: ConfigFile): Promise<void> {
  await mkdir(path.dirname(file), { recursive: true, mode: 0o700 });
  await writeFile(file, `${JSON.stringify(config, null, 2)}\n`, { mode: 0o600 });
  await chmod(file, 0o600);
}

/**
 * Where to connect and with which key: the flags win, then the environment (AGENTGATE_URL, AGENTGATE_API_KEY),
 * then the profile (--profile, AGENTGATE_PROFILE, or the file's default_profile), then http://127.0.0.1:8080.
 */
export async function resolveConnection(flags: { url?: string; apiKey?: string; profile?: string; tenant?: string }, env: NodeJS.ProcessEnv = process.env): Promise<Connection> {
  const config = await readConfig(configPath(env));
  const profileName = flags.profile ?? env.AGENTGATE_PROFILE ?? config.default_profile;
  const profile = profileName ? config.profiles?.[profileName] : undefined;
  if (profileName && (flags.profile ?? env.AGENTGATE_PROFILE) && !profile) {
    throw new UsageError(`no profile named "${profileName}" in ${configPath(env)}`);
  }
  return {
    url: flags.url ?? env.AGENTGATE_URL ?? profile?.url ?? DEFAULT_URL,
    apiKey: flags.apiKey ?? env.AGENTGATE_API_KEY ?? profile?.api_key,
    tenantId: flags.tenant ?? env.AGENTGATE_TENANT_ID ?? profile?.tenant_id,
    profile: profile ? profileName : undefined,
  };
}

/** A mistake in how the command was called (exit code 2). */
export class UsageError extends Error {}
