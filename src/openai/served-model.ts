import type { Deps } from '../deps.ts';
import { AppError } from '../errors.ts';
import { SERVED_MODES } from '../workflows/mode-table.ts';
import { availableModels, type ServiceModel } from './models.ts';

/** The models of /v1/models: those whose workflow this deployment serves (models.ts). */
export const servedModels = (deps: Deps): ServiceModel[] => availableModels(SERVED_MODES, { ads: deps.config.openai.adsModel });

/** A model of /v1/models (the ones chat and text completions and responses take), or the API's 404. */
export function findServedModel(deps: Deps, id: string): ServiceModel {
  const model = servedModels(deps).find((candidate) => candidate.id === id);
  if (!model) throw new AppError(404, `The model '${id}' does not exist or is not available in this deployment`);
  return model;
}

/** The task mode a model runs in; research models run through `force_research` in their context instead. */
export const taskModeOf = (model: ServiceModel) =>
  (model.mode === 'simple' || model.mode === 'standard' || model.mode === 'supervisor' ? model.mode : undefined);
