import { Counter, Registry, collectDefaultMetrics } from 'prom-client';

/** The process's metrics, served at /metrics in the Prometheus text format. */
export const metrics = new Registry();
collectDefaultMetrics({ register: metrics, prefix: 'agentgate_' });

/** Errors in work no request waits for (event writes, sweeps, purges, timers): logged and counted, never fatal. */
export const backgroundErrors = new Counter({
  name: 'agentgate_background_errors_total',
  help: 'Errors in background work, by source; each was logged and the process carried on',
  labelNames: ['source'] as const,
  registers: [metrics],
});

/** Database operations run again: after a lost deadlock or serialization race, or while the database was unreachable. */
export const databaseRetries = new Counter({
  name: 'agentgate_database_retries_total',
  help: 'Database operations retried, by reason (conflict, unavailable, timeout)',
  labelNames: ['reason'] as const,
  registers: [metrics],
});

/** Model calls started, by the phase they serve (agent, decomposition, synthesis, …): how much a workflow asks of its models. */
export const modelCalls = new Counter({
  name: 'agentgate_model_calls_total',
  help: 'Model calls started by task workflows, by phase',
  labelNames: ['phase'] as const,
  registers: [metrics],
});
