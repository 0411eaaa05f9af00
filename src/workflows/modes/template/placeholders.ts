/** `${query}`, `${<node id>}` and `${params.<key>}`: the same placeholder form as `context.system_prompt`. */
const PLACEHOLDER = /\$\{([A-Za-z0-9_.-]+)\}/g;

const PARAMS_PREFIX = 'params.';

/** What a node's placeholders are filled from: the task, and the results of the nodes it depends on. */
export interface PlaceholderValues {
  query: string;
  params: Record<string, unknown>;
  results: Record<string, string>;
}

/** The names inside every `${…}` of a text, in order. */
export function placeholderNames(text: string): string[] {
  return [...text.matchAll(PLACEHOLDER)].map((match) => match[1]);
}

/** Every string inside a tool's arguments, however deeply nested. */
export function stringsIn(value: unknown): string[] {
  if (typeof value === 'string') return [value];
  if (Array.isArray(value)) return value.flatMap(stringsIn);
  if (value !== null && typeof value === 'object') return Object.values(value).flatMap(stringsIn);
  return [];
}

/** A placeholder that names a prompt parameter, else undefined. */
export function paramKeyOf(name: string): string | undefined {
  return name.startsWith(PARAMS_PREFIX) && name.length > PARAMS_PREFIX.length ? name.slice(PARAMS_PREFIX.length) : undefined;
}

/**
 * The text with its placeholders filled. A parameter the task did not send stays as written, as it does in
 * `context.system_prompt`; node names were checked when the template was loaded.
 */
export function fillPlaceholders(text: string, values: PlaceholderValues): string {
  return text.replace(PLACEHOLDER, (placeholder, name: string) => {
    if (name === 'query') return values.query;
    const paramKey = paramKeyOf(name);
    if (paramKey !== undefined) return paramKey in values.params ? asText(values.params[paramKey]) : placeholder;
    return values.results[name] ?? placeholder;
  });
}

/** A tool's arguments with the placeholders of every string value filled; other values are kept. */
export function fillArguments(value: unknown, values: PlaceholderValues): unknown {
  if (typeof value === 'string') return fillPlaceholders(value, values);
  if (Array.isArray(value)) return value.map((item) => fillArguments(item, values));
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, fillArguments(item, values)]));
  }
  return value;
}

/** A result or parameter as text: strings as they are, anything else as JSON. */
export function asText(value: unknown): string {
  return typeof value === 'string' ? value : JSON.stringify(value) ?? String(value);
}
