import { createHash } from 'node:crypto';
import pg from 'pg';

/** Statements prepared by name on every connection at most; a text past the cap is sent unnamed. */
const MAX_NAMED = 512;
/** Texts seen once are remembered up to this many, then forgotten together. */
const MAX_SEEN_ONCE = 8_192;

/**
 * Names for the statements this process sends again and again, so that each connection parses and plans them
 * once (a named statement of the extended protocol) instead of for every execution: half of Postgres's CPU for a
 * short statement (docs/decisions.md, "Named statements"). A text is named on its second use, so that one-off texts
 * (a bulk insert of an unusual number of rows) never take a name; the names are capped, as each costs memory on every
 * connection that runs it. The name is a hash of the text: the same on every connection, never reused for another text.
 */
export function createStatementNames(): (text: string) => string | undefined {
  const names = new Map<string, string>();
  let seenOnce = new Set<string>();
  return (text) => {
    const known = names.get(text);
    if (known !== undefined || names.size >= MAX_NAMED) return known;
    if (!seenOnce.has(text)) {
      if (seenOnce.size >= MAX_SEEN_ONCE) seenOnce = new Set();
      seenOnce.add(text);
      return undefined;
    }
    seenOnce.delete(text);
    const name = `ag_${createHash('sha256').update(text).digest('base64url').slice(0, 24)}`;
    names.set(text, name);
    return name;
  };
}

/**
 * A pg client class that sends what `nameOf` names as a named statement. Only statements with values are named:
 * pg sends those through the extended protocol anyway, which holds one statement, while a text without values goes
 * as a simple query and may be a script of several (a migration).
 */
export function clientNaming(nameOf: (text: string) => string | undefined): typeof pg.Client {
  const send = pg.Client.prototype.query as (this: pg.Client, ...args: unknown[]) => unknown;
  class NamingClient extends pg.Client {}
  // One implementation for pg's overloads: what it does not name goes on exactly as the caller sent it.
  NamingClient.prototype.query = function (this: pg.Client, config: unknown, values?: unknown, callback?: unknown) {
    const name = typeof config === 'string' && Array.isArray(values) && values.length > 0 ? nameOf(config) : undefined;
    return name ? send.call(this, { text: config, values, name }, callback) : send.call(this, config, values, callback);
  } as typeof pg.Client.prototype.query;
  return NamingClient;
}
