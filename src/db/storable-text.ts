/**
 * Text from outside (what a tool fetched or ran, what a model said) made storable. Postgres refuses NUL (U+0000)
 * in text and jsonb, and jsonb refuses an unpaired surrogate (`\ud800`: it has no UTF-8 form). Each becomes
 * U+FFFD, the replacement character: visible where it stood, and one UTF-16 unit like what it replaces, so
 * lengths and offsets counted on the original (token-delta offsets, cuts) still hold.
 */
const REPLACEMENT = '\uFFFD';

export const isStorableText = (text: string) => !text.includes('\u0000') && text.isWellFormed();

export function storableText(text: string): string {
  return isStorableText(text) ? text : text.replaceAll('\u0000', REPLACEMENT).toWellFormed();
}

/**
 * Storable text deltas. A delta that ends in the first half of a surrogate pair is held back until the next one,
 * which may bring the second half (a provider can split a pair across deltas); only a half left unpaired is replaced.
 */
export function storableDeltas(): { next(delta: string): string; end(): string } {
  let held = '';
  return {
    next(delta: string): string {
      const text = held + delta;
      const last = text.charCodeAt(text.length - 1);
      const endsInHighSurrogate = last >= 0xd800 && last <= 0xdbff;
      held = endsInHighSurrogate ? text.slice(-1) : '';
      return storableText(endsInHighSurrogate ? text.slice(0, -1) : text);
    },
    end: () => storableText(held),
  };
}

/**
 * How JSON.stringify writes a NUL or an unpaired surrogate (a paired one it writes as it is). An escaped
 * backslash followed by `u0000`, i.e. a literal `\u0000` in the text, matches too: that only costs the slow path.
 */
const UNSTORABLE_ESCAPE = /\\u(?:0000|d[89a-f][0-9a-f]{2})/;

/**
 * The JSON text of a value with every string, keys included, made storable; otherwise exactly JSON.stringify's
 * (undefined for undefined). The common case, nothing to replace, costs one scan of the text.
 */
export function storableJsonText(value: unknown): string {
  const json = JSON.stringify(value);
  if (json === undefined || !UNSTORABLE_ESCAPE.test(json)) return json;
  return JSON.stringify(value, replaceUnstorable);
}

/** A copy of a JSON value with every string, keys included, made storable (what storing and reading it back gives). */
export function storableJson(value: unknown): unknown {
  return JSON.parse(storableJsonText(value ?? null));
}

function replaceUnstorable(_key: string, value: unknown): unknown {
  if (typeof value === 'string') return storableText(value);
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return value;
  const entries = Object.entries(value);
  if (entries.every(([key]) => isStorableText(key))) return value;
  // The replacer cannot rename a key, so the object is copied with its keys replaced; its values follow.
  return Object.fromEntries(entries.map(([key, child]) => [storableText(key), child]));
}
