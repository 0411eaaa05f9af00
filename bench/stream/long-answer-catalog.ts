import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parse, stringify } from 'yaml';
import type { ModelCatalogFile } from '../../src/llm/model-catalog-schema.ts';

/** The catalog model the long answers use: the mock of the large tier. */
export const LONG_ANSWER_MODEL = 'mock-large';

export interface LongAnswerCatalog {
  /** For MODELS_CONFIG. */
  path: string;
  remove(): Promise<void>;
}

/**
 * The project's model catalog with the large mock allowed `maxOutputTokens` output tokens. A simple task
 * makes one model call, and the catalog caps its answer (8,192 tokens for mock-large): one word per event,
 * a log of more events than that needs a longer answer than any catalog model allows.
 */
export async function writeLongAnswerCatalog(root: string, maxOutputTokens: number): Promise<LongAnswerCatalog> {
  const catalog = parse(await readFile(path.join(root, 'config/models.yaml'), 'utf8')) as ModelCatalogFile;
  const model = catalog.models.find((entry) => entry.name === LONG_ANSWER_MODEL);
  if (!model) throw new Error(`config/models.yaml has no ${LONG_ANSWER_MODEL}`);
  model.max_output_tokens = maxOutputTokens;
  model.context_window = Math.max(model.context_window, 2 * maxOutputTokens);
  const directory = await mkdtemp(path.join(os.tmpdir(), 'agentgate-bench-models-'));
  const catalogPath = path.join(directory, 'models.yaml');
  await writeFile(catalogPath, stringify(catalog));
  return { path: catalogPath, remove: () => rm(directory, { recursive: true, force: true }) };
}
