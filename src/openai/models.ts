/** The OpenAI-layer models (spec 4.11): each selects a workflow mode and, for research, a strategy. */
export interface ServiceModel {
  id: string;
  description: string;
  /** The task mode the model maps to; `research` runs with `force_research`. */
  mode: 'simple' | 'standard' | 'research' | 'supervisor' | 'ads_research';
  researchStrategy?: 'quick' | 'standard' | 'deep';
  defaultMaxTokens: number;
  /** Only in deployments that enable it (the ads model). */
  deploymentFlag?: 'ads';
}

/** See docs/decisions.md: client tools and the gateway's tools never mix in one request. */
const GATEWAY_TOOLS_ONLY = '. Uses the gateway\'s own tools; client tools, response_format and images are refused (use service-chat)';

export const SERVICE_MODELS: readonly ServiceModel[] = [
  {
    id: 'service-chat', mode: 'simple', defaultMaxTokens: 4096,
    description: 'Direct answers from one agent (simple workflow). Takes client tools (function calling), response_format and images: '
      + 'such a request is one direct model turn offered only the client\'s tools, never the gateway\'s',
  },
  { id: 'service-standard', description: 'A planned team of agents working in parallel (DAG workflow)' + GATEWAY_TOOLS_ONLY, mode: 'standard', defaultMaxTokens: 4096 },
  { id: 'service-standard-research', description: 'Research with a standard plan and citations' + GATEWAY_TOOLS_ONLY, mode: 'research', researchStrategy: 'standard', defaultMaxTokens: 4096 },
  { id: 'service-deep-research', description: 'Deep multi-step research with verification' + GATEWAY_TOOLS_ONLY, mode: 'research', researchStrategy: 'deep', defaultMaxTokens: 8192 },
  { id: 'service-quick-research', description: 'Fast research with a short plan' + GATEWAY_TOOLS_ONLY, mode: 'research', researchStrategy: 'quick', defaultMaxTokens: 4096 },
  { id: 'service-complex', description: 'A supervisor coordinating several agents' + GATEWAY_TOOLS_ONLY, mode: 'supervisor', defaultMaxTokens: 8192 },
  { id: 'service-ads-research', description: 'Ad research across platforms' + GATEWAY_TOOLS_ONLY, mode: 'ads_research', defaultMaxTokens: 8192, deploymentFlag: 'ads' },
];

export const DEFAULT_SERVICE_MODEL = 'service-chat';
/** Unix seconds the catalog was published, reported as `created`. */
export const MODELS_CREATED = 1767225600;

/**
 * The models this deployment can serve: a model is listed only when the workflow it needs is
 * available here (and, for the ads model, when its flag is on), so no request is answered by a
 * different workflow than the one its model promises.
 */
export function availableModels(supportedModes: readonly string[], flags: { ads: boolean }): ServiceModel[] {
  return SERVICE_MODELS.filter((model) => supportedModes.includes(model.mode) && (!model.deploymentFlag || flags[model.deploymentFlag]));
}
