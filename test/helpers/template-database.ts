import { spawn } from 'node:child_process';
import { once } from 'node:events';
import path from 'node:path';
import pg from 'pg';
import { childEnv } from './child-env.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');

/**
 * A database migrated once per run (`agentgate migrate`, the production command) that each gateway's database is
 * copied from: a copy takes about a second, migrating a new database (ours, then the engine's) several, and a run
 * starts a few hundred gateways. Nobody may connect to it: Postgres copies a database only while it has no sessions.
 */
export async function createTemplateDatabase(adminUrl: string): Promise<string> {
  const name = `agentgate_template_${process.pid}`;
  await adminQuery(adminUrl, `create database ${name}`);
  const output = await migrate(databaseUrlFor(adminUrl, name));
  if (output.code !== 0) throw new Error(`migrating the template database failed (${output.code}):\n${output.text}`);
  await adminQuery(adminUrl, `alter database ${name} with allow_connections false`);
  return name;
}

export async function dropTemplateDatabase(adminUrl: string, name: string): Promise<void> {
  await adminQuery(adminUrl, `drop database if exists ${name}`);
}

/** The URL of database `name` on the server of `adminUrl`. */
export function databaseUrlFor(adminUrl: string, name: string): string {
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

async function migrate(databaseUrl: string): Promise<{ code: number | null; text: string }> {
  const child = spawn(process.execPath, ['src/main.ts', 'migrate'], {
    cwd: ROOT, env: { ...childEnv(), DATABASE_URL: databaseUrl, LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let text = '';
  child.stdout!.on('data', (chunk) => { text += chunk; });
  child.stderr!.on('data', (chunk) => { text += chunk; });
  const [code] = await once(child, 'exit') as [number | null];
  return { code, text };
}

async function adminQuery(adminUrl: string, statement: string): Promise<void> {
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  try {
    await admin.query(statement);
  } finally {
    await admin.end();
  }
}
