import { Type } from 'typebox';
import { SCOPES } from './caller.ts';

const Email = Type.String({ format: 'email', maxLength: 254 });
const Password = Type.String({ minLength: 8, maxLength: 256 });

export const RegisterBody = Type.Object({
  email: Email,
  password: Password,
  name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
  tenant_name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
}, { additionalProperties: false });

export const LoginBody = Type.Object({ email: Email, password: Type.String({ minLength: 1, maxLength: 256 }) }, { additionalProperties: false });

export const RefreshBody = Type.Object({ refresh_token: Type.String({ minLength: 1, maxLength: 512 }) }, { additionalProperties: false });

const UserView = Type.Object({
  id: Type.String(), email: Type.String(), name: Type.Union([Type.String(), Type.Null()]), tenant_id: Type.String(), role: Type.String(),
});

export const TokenPair = Type.Object({
  access_token: Type.String(),
  refresh_token: Type.String(),
  token_type: Type.Literal('Bearer'),
  expires_in: Type.Integer({ description: 'seconds until the access token expires' }),
  user: UserView,
});

export const RegisterResponse = Type.Object({
  status: Type.Literal('accepted'),
  message: Type.String({ description: 'the same whether or not the email was new: sign in to continue' }),
});

export const MeResponse = Type.Object({
  user_id: Type.String(),
  email: Type.String(),
  name: Type.Union([Type.String(), Type.Null()]),
  tenant_id: Type.String(),
  role: Type.String(),
  scopes: Type.Array(Type.String()),
  auth_method: Type.String(),
  api_key_id: Type.Union([Type.String(), Type.Null()]),
  tenants: Type.Array(Type.Object({ id: Type.String(), name: Type.String(), role: Type.String() })),
});

export const CreateKeyBody = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 100 }),
  scopes: Type.Optional(Type.Array(Type.Enum([...SCOPES]), { maxItems: SCOPES.length, uniqueItems: true })),
  environment: Type.Optional(Type.Enum(['test', 'live'])),
  expires_at: Type.Optional(Type.String({ format: 'date-time' })),
  user_id: Type.Optional(Type.String({ format: 'uuid', description: 'admins and owners may create keys for members of their tenant' })),
  rate_limit_per_minute: Type.Optional(Type.Integer({ minimum: 1, maximum: 100_000 })),
}, { additionalProperties: false });

export const ApiKeyView = Type.Object({
  id: Type.String(),
  name: Type.String(),
  prefix: Type.String({ description: 'the first characters of the key, for recognising it' }),
  scopes: Type.Array(Type.String()),
  user_id: Type.String(),
  tenant_id: Type.String(),
  rate_limit_per_minute: Type.Union([Type.Integer(), Type.Null()]),
  created_at: Type.String(),
  expires_at: Type.Union([Type.String(), Type.Null()]),
  last_used_at: Type.Union([Type.String(), Type.Null()]),
  revoked_at: Type.Union([Type.String(), Type.Null()]),
});

export const CreatedKey = Type.Object({ ...ApiKeyView.properties, key: Type.String({ description: 'the secret, shown only once' }) });

export const ListKeysResponse = Type.Object({ api_keys: Type.Array(ApiKeyView), count: Type.Integer() });

export const RotateKeyBody = Type.Object({
  id: Type.Optional(Type.String({ format: 'uuid', description: 'the key to rotate; defaults to the key of this request' })),
}, { additionalProperties: false });

export const KeyIdParams = Type.Object({ id: Type.String({ format: 'uuid' }) });

export const RevokeResponse = Type.Object({ success: Type.Boolean(), message: Type.String(), id: Type.String() });
