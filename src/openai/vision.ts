import { badRequest } from '../errors.ts';
import type { ModelRegistry } from '../llm/provider-registry.ts';

/**
 * Images go only to models the catalogue marks `vision: true`: every candidate a service-chat task may be answered
 * by (the first and its fallbacks) must take them, else the request is refused naming the model that cannot.
 */
export function requireVision(models: ModelRegistry): void {
  const blind = models.resolveCandidates({}).find((candidate) => !candidate.catalogModel.vision);
  if (blind) {
    const { name, provider } = blind.catalogModel;
    throw badRequest(`image_url: the model ${name} (${provider}) that answers here does not take images (set vision: true in the model catalogue only for models that do)`);
  }
}
