import type { Deps } from '../../deps.ts';
import { AppError } from '../../errors.ts';
import { SERVED_MODES } from '../../workflows/mode-table.ts';
import { availableModels, type ServiceModel } from '../models.ts';

/** A model of /v1/models (the same ones chat completions take), or the API's 404. */
export function findServedModel(deps: Deps, id: string): ServiceModel {
  const model = availableModels(SERVED_MODES, { ads: deps.config.openai.adsModel }).find((candidate) => candidate.id === id);
  if (!model) throw new AppError(404, `The model '${id}' does not exist or is not available in this deployment`);
  return model;
}

/** The task mode a model runs in; research models run through `force_research` in their context instead. */
export const taskModeOf = (model: ServiceModel) =>
  (model.mode === 'simple' || model.mode === 'standard' || model.mode === 'supervisor' ? model.mode : undefined);
