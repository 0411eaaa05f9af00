import path from 'node:path';
import { pino } from 'pino';
import { startEmbeddedPostgres } from '../../src/db/embedded-postgres.ts';
import { openPool } from '../submit/database-pool.ts';
import { freePort } from '../submit/free-port.ts';
import { createDataDir, removeDataDir } from '../submit/gateway-process.ts';

/** One embedded Postgres for the whole benchmark; each run gets a database of its own on it. */
export interface BenchPostgres {
  /** `<dataDir>/postgres`, for the CPU of its process tree. */
  clusterDir: string;
  /** Creates (afresh) the database `name` and returns its URL. */
  createDatabase(name: string): Promise<string>;
  /** Drops it; every process on it must have stopped. */
  dropDatabase(name: string): Promise<void>;
  stop(): Promise<void>;
}

/**
 * Each process at the default pool sizes may hold DB_POOL_SIZE + ENGINE_DB_POOL_SIZE + 1 (its LISTEN connection)
 * = 41 connections: a gateway and two workers need 123, more than Postgres's default max_connections of 100.
 */
const MAX_CONNECTIONS = 200;

export async function startBenchPostgres(): Promise<BenchPostgres> {
  const dataDir = await createDataDir();
  const embedded = await startWithMaxConnections(dataDir).catch(async (error: unknown) => {
    await removeDataDir(dataDir);
    throw error;
  });
  const admin = openPool(embedded.url, 1);
  const urlOf = (name: string) => {
    const url = new URL(embedded.url);
    url.pathname = `/${name}`;
    return url.toString();
  };
  const dropDatabase = async (name: string) => {
    await admin.query(`drop database if exists "${name}" with (force)`);
  };
  return {
    clusterDir: path.join(dataDir, 'postgres'),
    async createDatabase(name) {
      await dropDatabase(name);
      await admin.query(`create database "${name}"`);
      return urlOf(name);
    },
    dropDatabase,
    async stop() {
      await admin.end();
      await embedded.stop();
      await removeDataDir(dataDir);
    },
  };
}

/** max_connections takes effect at a server start: the new cluster is started, configured, and started again. */
async function startWithMaxConnections(dataDir: string) {
  const options = { dataDir, port: await freePort(), logger: pino({ level: 'warn' }) };
  const first = await startEmbeddedPostgres(options);
  const pool = openPool(first.url, 1);
  try {
    await pool.query(`alter system set max_connections = ${MAX_CONNECTIONS}`);
  } finally {
    await pool.end();
    await first.stop();
  }
  return startEmbeddedPostgres(options);
}
