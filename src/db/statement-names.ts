import { createHash } from 'node:crypto';

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
