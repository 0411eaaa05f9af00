import type { Logger } from 'pino';
import type { Config } from './config.ts';
import type { Db } from './db/database.ts';
import type { WriteRefusals } from './db/write-refusals.ts';
import type { TaskStarter } from './engine/engine.ts';
import type { EventHub } from './events/event-hub.ts';
import type { GroupCommitter } from './events/group-commit.ts';
import type { ModelRegistry } from './llm/provider-registry.ts';
import type { MetricsExposition } from './observability/metrics-exposition.ts';
import type { Policy } from './policy/policy.ts';
import type { SessionTitler } from './workflows/memory/session-titles.ts';
import type { StreamSlots } from './streaming/stream-slots.ts';
import type { ToolRegistry } from './tools/registry.ts';
import type { TemplateRegistry } from './workflows/modes/template/template-registry.ts';
import type { AgentCatalogue } from './workflows/modes/named-agent/agent-catalogue.ts';
import type { ResearchConfig } from './workflows/modes/research/research-config.ts';
import type { SkillCatalogue } from './skills/skill-catalogue.ts';

/** Built once by main.ts and passed explicitly to routes, services and workflows (STYLE.md §7). */
export interface Deps {
  config: Readonly<Config>;
  db: Db;
  models: ModelRegistry;
  /** The tools agents may call (the built-ins); a role's preset chooses among them. */
  tools: ToolRegistry;
  /** The workflow templates (config/templates) a task can run instead of a plan. */
  templates: TemplateRegistry;
  /** The skills (SKILLS_PATH), read again while the process runs (skills/reload-skills.ts). */
  skills: SkillCatalogue;
  /** The single-purpose agents (config/agents) a task runs without planning. */
  agents: AgentCatalogue;
  /** Deep research's strategy presets and citation rules (config/research-strategies.yaml, citation-credibility.yaml). */
  research: ResearchConfig;
  logger: Logger;
  policy: Policy;
  /** Live fan-out of committed events (LISTEN/NOTIFY); the log itself is in the database. */
  events: EventHub;
  /** Event appends outside a task state change, written together with other tasks' (group commit). */
  appends: GroupCommitter;
  /**
   * Aborted when the process begins to shut down: it takes no new work (readiness answers 503, new tasks go to
   * the queue), and native event streams end with a frame naming where to resume.
   */
  stopping: AbortSignal;
  /**
   * Aborted when the drain ends (SHUTDOWN_GRACE_SECONDS): the workflows still running here are handed to other
   * workers, their model calls are aborted and they record nothing; waits that cannot resume elsewhere end.
   */
  handingOver: AbortSignal;
  /** `ok`, or what is wrong with the database this process supervises (the embedded server restarting or failing). */
  databaseHealth(): string;
  /** The writes the database refused lately (read-only, out of disk): readiness is 503 while they go on. */
  writeRefusals: WriteRefusals;
  /** Concurrent streams per credential in this process, shared by every kind of stream. */
  streamSlots: StreamSlots;
  /** Names sessions after their first completed task, off the tasks' path. */
  titles: SessionTitler;
  /** Starts task workflows: here at once while a worker is free, through the queue otherwise. */
  engine: TaskStarter;
  /** Renders /metrics, reading the values known only at scrape time. */
  metrics: MetricsExposition;
}
