/**
 * How the mock provider answers the phases of a multi-agent task (issue 14, scope 9), deterministically and
 * from the prompt alone, so real providers get exactly the same calls.
 */

/**
 * A decomposition of the query: one subtask per sentence (or line), each depending on the one before when it
 * starts with "then" or "after that". One sentence is a simple plan; more get a higher score the more there are.
 */
export function mockDecomposition(query: string): unknown {
  const parts = query.split(/(?<=[.!?;])\s+|\n+/).map((part) => part.trim()).filter((part) => part.length > 0).slice(0, 8);
  const sentences = parts.length > 0 ? parts : [query.trim() || 'answer the request'];
  const subtasks = sentences.map((sentence, index) => ({
    id: `task-${index + 1}`,
    description: sentence,
    dependencies: index > 0 && /^(then|after that|afterwards|finally)\b/i.test(sentence) ? [`task-${index}`] : [],
    suggested_tools: [],
    tool_parameters: {},
  }));
  const hasDependencies = subtasks.some((subtask) => subtask.dependencies.length > 0);
  return {
    complexity_score: subtasks.length === 1 ? 0.2 : Math.min(0.9, 0.3 + 0.1 * subtasks.length),
    subtasks,
    execution_strategy: hasDependencies ? 'hybrid' : 'parallel',
    concurrency_limit: 5,
  };
}

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
