import { Type } from 'typebox';

export const AgentIdParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 200 }) });

const InputPropertyView = Type.Object({
  type: Type.String(),
  description: Type.Optional(Type.String()),
  default: Type.Optional(Type.Unknown()),
  enum: Type.Optional(Type.Array(Type.Unknown())),
});

/** Spec 2.11, with the catalogue's `output_schema` and `timeout_seconds` besides. */
export const AgentView = Type.Object({
  id: Type.String(),
  name: Type.String(),
  description: Type.String(),
  category: Type.String(),
  tool: Type.String(),
  input_schema: Type.Object({ required: Type.Array(Type.String()), properties: Type.Record(Type.String(), InputPropertyView) }),
  output_schema: Type.Record(Type.String(), Type.Unknown()),
  cost_per_call: Type.Number(),
  timeout_seconds: Type.Integer(),
});

export const ListAgentsResponse = Type.Object({ agents: Type.Array(AgentView), count: Type.Integer() });

export const ExecuteAgentBody = Type.Object({
  input: Type.Record(Type.String(), Type.Unknown(), { description: 'The agent\'s input, checked against its input_schema' }),
  session_id: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
  stream: Type.Optional(Type.Boolean({ description: 'Reserved (spec 4.9): accepted, unused; stream the task by its id' })),
}, { additionalProperties: false });

export const ExecuteAgentResponse = Type.Object({
  task_id: Type.String(),
  agent_id: Type.String(),
  status: Type.String(),
  created_at: Type.String(),
});

export const AvatarPresetsResponse = Type.Object({
  presets: Type.Array(Type.Object({ id: Type.String(), name: Type.String(), url: Type.String({ format: 'uri-reference' }) })),
});

/** One agent of the tenant's mirror; a removed agent is a tombstone (`deleted_at` set, `is_deleted` true). */
export const AgentSyncRecord = Type.Object({
  agent_key: Type.String(),
  tenant_id: Type.String(),
  config: Type.Record(Type.String(), Type.Unknown()),
  version: Type.Integer({ description: 'Raised each time the catalogue entry changes' }),
  created_at: Type.String(),
  updated_at: Type.String(),
  deleted_at: Type.Union([Type.String(), Type.Null()]),
  is_deleted: Type.Boolean(),
});

export const AgentSyncResponse = Type.Object({ agents: Type.Array(AgentSyncRecord), count: Type.Integer() });
