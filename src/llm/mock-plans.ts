/**
 * How the mock provider answers the phases of a multi-agent task (issue 14, scope 9), deterministically and
 * from the prompt alone, so real providers get exactly the same calls.
 */

export { mockDecomposition } from './mock-decomposition.ts';

/** A synthesis that names every result it was given (the `### <id>` sections of the prompt) and each failure. */
export function mockSynthesis(prompt: string): string {
  const results = [...prompt.matchAll(/^### (\S+?):? .*\n([^\n]*)/gm)].map((match) => `${match[1]}: ${firstWords(match[2], 8)}`);
  const failed = [...prompt.matchAll(/^- (\S+?) failed/gm)].map((match) => match[1]);
  const failures = failed.length > 0 ? ` Failed: ${failed.join(', ')}.` : '';
  return `Synthesis of ${results.length} results. ${results.join('; ')}.${failures}`;
}

function firstWords(text: string, count: number): string {
  const words = text.split(/\s+/).filter(Boolean);
  return words.slice(0, count).join(' ') + (words.length > count ? ' …' : '');
}
