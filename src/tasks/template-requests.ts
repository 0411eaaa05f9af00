import { badRequest } from '../errors.ts';
import { modelNodeIds } from '../workflows/modes/template/template-file.ts';
import type { TemplateRegistry } from '../workflows/modes/template/template-registry.ts';
import { isTemplateVersion, versionProblem } from '../workflows/modes/template/template-version.ts';

/**
 * 400 for a template request that cannot run (spec 2.2): a version that is not a semantic version, a template (or
 * version) this deployment does not have, a version without a template, and `disable_ai` without a template or
 * with one that calls a model.
 * Unlike the reference, a missing template is refused rather than planned by a model: no silent fallback.
 */
export function refuseUnrunnableTemplate(templates: TemplateRegistry, context: Record<string, unknown>): void {
  const name = context.template as string | undefined;
  const version = context.template_version as string | undefined;
  const disableAi = context.disable_ai === true;
  if (version !== undefined && !isTemplateVersion(version)) throw badRequest(`invalid context.template_version: ${versionProblem(version)}`);
  if (name === undefined) {
    if (version !== undefined) throw badRequest('template_version needs a template: name one with context.template');
    if (disableAi) throw badRequest('disable_ai runs a template without a model: name one with context.template');
    return;
  }
  const template = templates.find(name, version);
  if (!template) throw badRequest(version === undefined ? `template ${name} not found` : `template ${name} version ${version} not found`);
  const modelNodes = modelNodeIds(template);
  if (disableAi && modelNodes.length > 0) {
    throw badRequest(`disable_ai: template ${name} ${template.version} calls a model (node ${modelNodes.join(', ')}); choose a template without model nodes`);
  }
}
