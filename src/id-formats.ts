/** A session id a client may choose: a UUID, or its own id of up to 128 of these characters (spec 2.1). */
export const SESSION_ID_PATTERN = '^[A-Za-z0-9:_\\-\\.]{1,128}$';
