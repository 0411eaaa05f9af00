import { Core, type ClientOptions } from './core.ts';
import { Agents, ApiKeys, Approvals, Auth, OpenAI, Probes, Reviews, Schedules, Sessions, Skills, Streams, Swarm, Tools, Webhooks } from './resources.ts';
import { Tasks } from './tasks.ts';

/**
 * The agentgate API client. Every route of /openapi.json is a method of one of its groups (see `routes`).
 *   const client = new AgentgateClient({ baseUrl: 'http://127.0.0.1:8080', apiKey: process.env.AGENTGATE_API_KEY });
 */
export class AgentgateClient {
  readonly tasks: Tasks;
  readonly sessions: Sessions;
  readonly approvals: Approvals;
  readonly reviews: Reviews;
  readonly swarm: Swarm;
  readonly schedules: Schedules;
  readonly tools: Tools;
  readonly skills: Skills;
  readonly agents: Agents;
  readonly auth: Auth;
  readonly streams: Streams;
  readonly probes: Probes;
  readonly openai: OpenAI;
  readonly webhooks: Webhooks;
  readonly baseUrl: string;

  constructor(options: ClientOptions = {}) {
    const core = new Core(options);
    this.baseUrl = core.baseUrl;
    this.tasks = new Tasks(core);
    this.sessions = new Sessions(core);
    this.approvals = new Approvals(core);
    this.reviews = new Reviews(core);
    this.swarm = new Swarm(core);
    this.schedules = new Schedules(core);
    this.tools = new Tools(core);
    this.skills = new Skills(core);
    this.agents = new Agents(core);
    this.auth = new Auth(core);
    this.streams = new Streams(core);
    this.probes = new Probes(core);
    this.openai = new OpenAI(core);
    this.webhooks = new Webhooks(core);
  }
}

/** Each group of the client (a path through its properties, e.g. `auth.keys`) with the routes its methods call. */
export const ROUTES_BY_GROUP = {
  tasks: Tasks.routes, sessions: Sessions.routes, approvals: Approvals.routes, reviews: Reviews.routes, swarm: Swarm.routes,
  schedules: Schedules.routes, tools: Tools.routes, skills: Skills.routes, agents: Agents.routes, auth: Auth.routes,
  'auth.keys': ApiKeys.routes, streams: Streams.routes, probes: Probes.routes, openai: OpenAI.routes, webhooks: Webhooks.routes,
} as const;
