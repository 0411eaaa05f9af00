import { Type } from 'typebox';

/** The spec's error shape, `{"error": "..."}` (spec 7), which every route's 4xx and 5xx answers share. */
export const ErrorBody = Type.Object({ error: Type.String() }, { additionalProperties: true });
