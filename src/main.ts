import closeWithGrace from 'close-with-grace';
import { pino, type Logger } from 'pino';
import { buildApp } from './app.ts';
import { loadConfig, type Config, type ProcessRole } from './config.ts';
import { connectDatabase } from './db/connect.ts';
import type { Deps } from './deps.ts';
import { enqueueTaskWorkflow, launchEngine, migrateEngine, shutdownEngine } from './engine/engine.ts';
import { loadModelCatalog } from './llm/model-catalog.ts';
import { createModelRegistry } from './llm/provider-registry.ts';
import { requeueOrphanedTasks } from './tasks/requeue-orphans.ts';
import { registerTaskWorkflow, type TaskWorkflow } from './workflows/task-workflow.ts';

const ORPHAN_SWEEP_INTERVAL_MS = 30_000;
const USAGE = 'usage: node src/main.ts <serve|migrate> [--role all|gateway|worker]';

async function main(argv: string[]): Promise<void> {
  const [command = 'serve', ...rest] = argv;
  const config = loadConfig(process.env, parseRole(rest));
  const logger = pino({ level: config.logLevel, base: { service: 'agentgate' } });
  if (command === 'migrate') return migrate(config, logger);
  if (command === 'serve') return serve(config, logger);
  throw new Error(USAGE);
}

async function migrate(config: Readonly<Config>, logger: Logger): Promise<void> {
  const connection = await connectDatabase(config, logger);
  try {
    await migrateEngine(connection.url);
  } finally {
    await connection.close();
  }
  logger.info('migrations applied');
}

/** Starts everything in dependency order and stops it in reverse on SIGINT/SIGTERM. */
async function serve(config: Readonly<Config>, logger: Logger): Promise<void> {
  const connection = await connectDatabase(config, logger);
  const models = createModelRegistry(loadModelCatalog(config.modelsConfigPath), config.providerEnv);
  logger.info({ mock_only: models.isMockOnly() }, models.describe());

  let taskWorkflow: TaskWorkflow | undefined;
  const deps: Deps = {
    config, db: connection.db, models, logger,
    engine: { enqueueTask: (taskId) => enqueueTaskWorkflow(taskWorkflow!, taskId) },
  };
  taskWorkflow = registerTaskWorkflow(deps);
  await launchEngine({ databaseUrl: connection.url, role: config.role, workerConcurrency: config.workerConcurrency, executorId: config.executorId, logger });

  await requeueOrphanedTasks(deps, 0);
  const sweep = setInterval(() => requeueOrphanedTasks(deps).catch((error) => logger.error({ err: error }, 'orphan sweep failed')), ORPHAN_SWEEP_INTERVAL_MS);
  sweep.unref();

  const app = config.role === 'worker' ? undefined : await buildApp(deps);
  closeWithGrace({ delay: 10_000, logger }, async ({ signal, err }) => {
    if (err) logger.error({ err }, 'shutting down after an error');
    else logger.info({ signal }, 'shutting down');
    clearInterval(sweep);
    await app?.close();
    await shutdownEngine();
    await connection.close();
  });
  if (app) await app.listen({ host: config.host, port: config.port });
  logger.info({ role: config.role, port: config.port, environment: config.environment }, 'agentgate started');
}

function parseRole(args: string[]): ProcessRole {
  const index = args.indexOf('--role');
  const role = index === -1 ? 'all' : args[index + 1];
  if (role === 'all' || role === 'gateway' || role === 'worker') return role;
  throw new Error(`invalid --role ${role}; ${USAGE}`);
}

main(process.argv.slice(2)).catch((error) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
